-- WF-03 at the gate, whatever the timing: a gate the workflow passes after a body whose
-- approval nodes ran passes only on the document version those approvals were given on.
-- Every approval node of the gate's body slots that completed in this round needs its
-- requests of the round (same token) approved, pinned to p_document's version, with at
-- least one approved decision on that version and none voided, applied or on another
-- version. A body that came back rejected asks nothing when its rejection picked the gate's
-- transition (p_rejecting); otherwise a rejection refuses the pass like a missing decision.
-- Returns the ids of the requests the pass relies on; raises APPROVAL_VERSION_STALE (CH052),
-- naming the node and what is missing, so the instance fails rather than pass unapproved.
CREATE OR REPLACE FUNCTION charter._check_gate_approvals(
    p_instance charter.workflow_instances, p_wf jsonb, p_document charter.documents, p_gate text,
    p_rejecting boolean)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_node     record;
    v_request  charter.approval_requests;
    v_why      text;
    v_relied   jsonb := '[]'::jsonb;
BEGIN
    IF p_rejecting THEN
        RETURN v_relied;
    END IF;
    FOR v_node IN SELECT s.step_slug, s.token FROM charter.step_states AS s
                   WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.status = 'completed'
                     AND p_wf #>> ARRAY['nodes', s.step_slug, 'type'] = 'approval'
                     AND p_wf #>> ARRAY['slotMap', s.step_slug] = ANY (charter._body_slots(p_wf, p_gate))
                   ORDER BY s.step_slug LOOP
        v_why := NULL;
        IF NOT EXISTS (SELECT 1 FROM charter.approval_requests AS r
                        WHERE r.run_id = p_instance.id AND r.org_id = p_instance.org_id
                          AND r.node_id = v_node.step_slug AND r.token = v_node.token) THEN
            v_why := 'it has no approval request in this round';
        ELSE
            SELECT r.* INTO v_request FROM charter.approval_requests AS r
             WHERE r.run_id = p_instance.id AND r.org_id = p_instance.org_id
               AND r.node_id = v_node.step_slug AND r.token = v_node.token
               AND (r.status <> 'approved' OR r.entity_version <> p_document.version
                    OR NOT EXISTS (SELECT 1 FROM charter.approval_decisions AS d
                                    WHERE d.request_id = r.id AND d.org_id = r.org_id AND d.decision = 'approved'
                                      AND d.applied_at IS NULL AND d.voided_at IS NULL
                                      AND d.entity_version = p_document.version)
                    OR EXISTS (SELECT 1 FROM charter.approval_decisions AS d
                                WHERE d.request_id = r.id AND d.org_id = r.org_id AND d.decision = 'approved'
                                  AND (d.applied_at IS NOT NULL OR d.voided_at IS NOT NULL
                                       OR d.entity_version <> p_document.version)))
             ORDER BY r.created_at, r.id
             LIMIT 1;
            IF FOUND THEN
                v_why := CASE
                    WHEN v_request.status <> 'approved' THEN format('its request %s is %s', v_request.id, v_request.status)
                    WHEN v_request.entity_version <> p_document.version
                        THEN format('its request %s was approved on version %s', v_request.id, v_request.entity_version)
                    ELSE format('the decisions of its request %s were voided or used', v_request.id) END;
            END IF;
        END IF;
        IF v_why IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH052',
                MESSAGE = format('Gate %s would move version %s of document %L, but approval %s does not hold for it: %s',
                                 p_gate, p_document.version, p_document.id, v_node.step_slug, v_why),
                HINT = 'An approval is valid only for the version approved; the document must be approved again.';
        END IF;
        v_relied := v_relied || coalesce((SELECT jsonb_agg(r.id ORDER BY r.created_at, r.id) FROM charter.approval_requests AS r
                                           WHERE r.run_id = p_instance.id AND r.org_id = p_instance.org_id
                                             AND r.node_id = v_node.step_slug AND r.token = v_node.token), '[]'::jsonb);
    END LOOP;
    RETURN v_relied;
END;
$$;
