-- Contracts are the platform's and each org is pinned to one version of them (issue #36):
-- a new contract version changes nothing for an org until the org publishes a definition on
-- it or rebases. org_contracts holds the envelope version each org is on per entity type;
-- a platform key (charter keys create --platform) may publish contracts over HTTP.

CREATE TABLE charter.org_contracts (
    org_id              text        NOT NULL,
    entity_type         text        NOT NULL,
    envelope_version_id text        NOT NULL,
    pinned_at           timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT org_contracts_pkey PRIMARY KEY (org_id, entity_type),
    CONSTRAINT org_contracts_envelope_fkey FOREIGN KEY (envelope_version_id)
        REFERENCES charter.workflow_versions (id)
);
COMMENT ON TABLE charter.org_contracts IS
    'The envelope version (a published contract) each org is on per entity type: new documents validate against it until the org publishes a definition on another or rebases.';
ALTER TABLE charter.org_contracts ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.org_contracts
    USING (org_id = current_setting('charter.org_id', true));

ALTER TABLE charter.api_keys ADD COLUMN platform boolean NOT NULL DEFAULT false;

-- The orgs there are now stay where they are: an org with an effective workflow on the
-- envelope version its baseRef names, any other org that has documents on the newest one.
INSERT INTO charter.org_contracts (org_id, entity_type, envelope_version_id)
SELECT DISTINCT ON (v.org_id, v.entity_type) v.org_id, v.entity_type, e.id
  FROM charter.workflows AS w
  JOIN charter.workflow_versions AS v ON v.id = w.current_version_id AND v.definition_kind = 'effective'
  JOIN charter.workflow_versions AS e
    ON e.workflow_slug = 'envelope:' || v.entity_type AND e.definition_kind = 'envelope'
   AND (e.contract->>'version')::numeric = (v.base_ref->>'envelopeVersion')::numeric
 ORDER BY v.org_id, v.entity_type, e.version DESC;
INSERT INTO charter.org_contracts (org_id, entity_type, envelope_version_id)
SELECT d.org_id, d.entity_type, w.current_version_id
  FROM (SELECT DISTINCT x.org_id, x.entity_type FROM charter.documents AS x) AS d
  JOIN charter.workflows AS w ON w.slug = 'envelope:' || d.entity_type AND w.current_version_id IS NOT NULL
ON CONFLICT (org_id, entity_type) DO NOTHING;

-- publish_contract learns whether its caller may publish a new version (a platform act);
-- create_api_key whether the key is a platform key.
DROP FUNCTION IF EXISTS charter.publish_contract(jsonb, jsonb, jsonb);
DROP FUNCTION IF EXISTS charter.create_api_key(text, text, text, text);
