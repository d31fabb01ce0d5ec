-- WF-03 at the gate: the approved, unapplied decisions of the instance's requests in this
-- round are consumed (applied) by the gate in the same transaction, each checked against
-- the document's current version; a stale one refuses the pass. Returns their ids.
CREATE OR REPLACE FUNCTION charter._consume_approvals(
    p_instance charter.workflow_instances, p_document charter.documents, p_gate text)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_stale   charter.approval_decisions;
    v_applied jsonb;
BEGIN
    SELECT d.* INTO v_stale FROM charter.approval_decisions AS d
      JOIN charter.approval_requests AS r ON r.id = d.request_id AND d.org_id = r.org_id
     WHERE r.run_id = p_instance.id AND r.org_id = p_instance.org_id AND r.status = 'approved' AND d.decision = 'approved'
       AND d.applied_at IS NULL AND d.voided_at IS NULL AND d.entity_version <> p_document.version
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH052',
            MESSAGE = format('Gate %s would pass on %s''s approval of version %s, but document %L is at version %s',
                             p_gate, v_stale.actor, v_stale.entity_version, p_document.id, p_document.version),
            HINT = 'An approval is valid only for the version approved; the document must be approved again.';
    END IF;
    WITH applied AS (
        UPDATE charter.approval_decisions AS d SET applied_at = now(), applied_by = p_gate
          FROM charter.approval_requests AS r
         WHERE r.id = d.request_id AND d.org_id = r.org_id AND r.run_id = p_instance.id AND r.org_id = p_instance.org_id AND r.status = 'approved'
           AND d.decision = 'approved' AND d.applied_at IS NULL AND d.voided_at IS NULL
        RETURNING d.id
    )
    SELECT coalesce(jsonb_agg(id ORDER BY id), '[]'::jsonb) INTO v_applied FROM applied;
    RETURN v_applied;
END;
$$;
