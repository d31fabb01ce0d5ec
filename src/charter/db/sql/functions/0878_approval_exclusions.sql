-- Who may not approve a request (segregation of duties), as {user: why}:
--   * its requester: the user who passed the gate the request follows ("requester");
--   * the authors of the document's content since its last approved version: users who
--     changed its fields (created it, edited it, amended it) through the api in a version
--     after the last one a gate consumed an approval for, up to the pinned version — the
--     changes the approver is shown in the request's diff ("authored version 3" / "authored
--     versions 1, 3"). Transitions change no fields, and the engine's and the system's own
--     changes (via workflow or system) have no author to leave out;
--   * in a chain that does not allow the same approver, whoever decided one of its earlier
--     stages on this version ("decided stage 1").
-- A user with several reasons is given the first of these. Read when a request opens (its
-- approvers are resolved without these people), again when someone decides and when a
-- request escalates, so a decision never rests on the stored list alone.
CREATE OR REPLACE FUNCTION charter._approval_exclusions(
    p_org_id text, p_document_id text, p_version integer, p_requester text,
    p_run_id text, p_node text, p_token text, p_config jsonb)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    WITH approved AS (
        SELECT coalesce(max(d.entity_version), 0) AS version
          FROM charter.approval_decisions AS d
         WHERE d.org_id = p_org_id AND d.document_id = p_document_id
           AND d.applied_at IS NOT NULL AND d.entity_version <= p_version
    ), authors AS (
        SELECT a.actor, array_agg(DISTINCT a.version ORDER BY a.version) AS versions
          FROM charter.document_audit AS a, approved
         WHERE a.org_id = p_org_id AND a.document_id = p_document_id
           AND a.version > approved.version AND a.version <= p_version
           AND a.via = 'api' AND a.actor <> 'system' AND a.actor NOT LIKE 'service:%'
           AND jsonb_typeof(a.changes) = 'object'
           AND EXISTS (SELECT 1 FROM jsonb_object_keys(a.changes) AS k WHERE k NOT LIKE '$%')
         GROUP BY a.actor
    ), stages AS (
        SELECT d.actor, min((r.config->>'stage')::integer) AS stage
          FROM charter.approval_requests AS r
          JOIN charter.approval_decisions AS d ON d.request_id = r.id AND d.org_id = r.org_id
         WHERE p_config ? 'stages' AND NOT coalesce((p_config->>'allowSameApprover')::boolean, false)
           AND r.org_id = p_org_id AND r.run_id = p_run_id AND r.node_id = p_node AND r.token = p_token
           AND r.entity_version = p_version AND r.status = 'approved' AND r.config ? 'stages'
           AND (r.config->>'stage')::integer < (p_config->>'stage')::integer
           AND d.voided_at IS NULL
         GROUP BY d.actor
    )
    SELECT coalesce((SELECT jsonb_object_agg(s.actor, format('decided stage %s', s.stage + 1)) FROM stages AS s), '{}'::jsonb)
        || coalesce((SELECT jsonb_object_agg(a.actor, format('authored version%s %s',
                                                              CASE WHEN cardinality(a.versions) > 1 THEN 's' ELSE '' END,
                                                              array_to_string(a.versions, ', ')))
                       FROM authors AS a), '{}'::jsonb)
        || CASE WHEN p_requester IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(p_requester, 'requester') END
$$;
