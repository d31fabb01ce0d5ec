-- Moves an org to an envelope version of an entity type (publishing an org definition on
-- it, a rebase, an archive that makes an older definition current).
CREATE OR REPLACE FUNCTION charter._move_org_contract(p_org_id text, p_entity_type text, p_envelope_version_id text)
RETURNS void
LANGUAGE sql
SET search_path = ''
AS $$
    INSERT INTO charter.org_contracts AS p (org_id, entity_type, envelope_version_id)
    VALUES (p_org_id, p_entity_type, p_envelope_version_id)
    ON CONFLICT (org_id, entity_type) DO UPDATE
       SET envelope_version_id = excluded.envelope_version_id, pinned_at = now()
     WHERE p.envelope_version_id IS DISTINCT FROM excluded.envelope_version_id
$$;
