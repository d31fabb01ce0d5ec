-- The workflow a new instance follows: the org's current effective workflow for the entity
-- type when it is compiled on the document's contract (envelope version), else the org's
-- newest published one on that version (the org rebased after the document was written),
-- else the bare envelope of the document's contract. A document and its instance are always
-- on one envelope version.
CREATE OR REPLACE FUNCTION charter._instance_version(p_org_id text, p_document charter.documents)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_version text;
    v_current jsonb;
BEGIN
    v_version := coalesce(
        (SELECT v.id FROM charter.workflows AS w
           JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
           JOIN charter.workflow_versions AS c ON c.id = p_document.contract_version_id
          WHERE w.slug = format('effective:%s:%s', p_org_id, p_document.entity_type)
            AND (v.base_ref->>'envelopeVersion')::numeric = (c.contract->>'version')::numeric),
        (SELECT v.id FROM charter.workflow_versions AS v
           JOIN charter.workflow_versions AS c ON c.id = p_document.contract_version_id
          WHERE v.workflow_slug = format('effective:%s:%s', p_org_id, p_document.entity_type)
            AND v.status = 'published'
            AND (v.base_ref->>'envelopeVersion')::numeric = (c.contract->>'version')::numeric
          ORDER BY v.version DESC LIMIT 1));
    IF v_version IS NOT NULL THEN
        RETURN v_version;
    END IF;
    -- The org's own steps (its approvals among them) are on another contract version: the
    -- bare envelope would let users pass the gates its body guards, so refuse instead.
    SELECT v.base_ref INTO v_current FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = format('effective:%s:%s', p_org_id, p_document.entity_type);
    IF v_current IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH040',
            MESSAGE = format('Org %L runs %s on envelope version %s, but document %L follows contract version %s, for which the org has no workflow',
                             p_org_id, p_document.entity_type, v_current->>'envelopeVersion', p_document.id,
                             (SELECT c.contract->>'version' FROM charter.workflow_versions AS c WHERE c.id = p_document.contract_version_id)),
            HINT = format('Publish the org''s definition on that version, or rebase it (client.definitions.rebase(%L)).', p_document.entity_type);
    END IF;
    RETURN p_document.contract_version_id;
END;
$$;
