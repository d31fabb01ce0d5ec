-- The envelope version each org is on per entity type (issue #36: contracts are the
-- platform's, pinned per org). Set at an org's first document of the type, by publishing an
-- org definition (its baseRef's version) and by a rebase; a new contract version changes
-- nothing for an org until then.
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
