-- escalateAfter passed with the request undecided: it goes to its approvers' managers
-- (recorded as escalated) and notifications tell them, by email and in the app; the node
-- waits on. A manager whom
-- segregation of duties leaves out of the request (its requester, an author of the changes
-- it covers, an earlier stage's decider) is not among them; with nobody left it stays with
-- its approvers.
CREATE OR REPLACE FUNCTION charter._escalate_approval(p_instance charter.workflow_instances, p_wait charter.instance_waits)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_request  charter.approval_requests;
    v_managers text[];
    v_excluded jsonb;
    v_key      text;
BEGIN
    SELECT * INTO v_request FROM charter.approval_requests AS r
     WHERE r.id = p_wait.detail->>'requestId' AND r.org_id = p_wait.org_id AND r.status = 'pending'
       FOR UPDATE;
    IF FOUND AND v_request.escalated_at IS NULL THEN
        v_excluded := charter._approval_exclusions(v_request.org_id, v_request.document_id, v_request.entity_version,
            v_request.requester, v_request.run_id, v_request.node_id, v_request.token, v_request.config);
        v_managers := ARRAY(SELECT DISTINCT u.manager_id FROM charter.directory_users AS u
                             WHERE u.org_id = v_request.org_id AND u.user_id = ANY (v_request.approvers)
                               AND u.manager_id IS NOT NULL AND NOT v_excluded ? u.manager_id ORDER BY 1);
        IF cardinality(v_managers) > 0 THEN
            UPDATE charter.approval_requests
               SET approvers = v_managers, escalated_at = now(),
                   delegated = delegated || jsonb_build_object('escalatedFrom', to_jsonb(v_request.approvers))
             WHERE id = v_request.id AND org_id = v_request.org_id;
            v_key := encode(sha256(convert_to(v_request.id || '|escalation', 'UTF8')), 'hex');
            INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key)
            VALUES (v_request.org_id, 'side_effects', v_key) ON CONFLICT DO NOTHING;
            IF FOUND THEN
                INSERT INTO charter.side_effects (org_id, run_id, node_id, effect_type, request, idempotency_key, trace_id)
                VALUES (v_request.org_id, v_request.run_id, v_request.node_id || '#escalation', 'notification',
                        jsonb_build_object('channel', 'email', 'subject', format('Approval escalated: %s %s',
                                               p_instance.entity_type, v_request.document_id),
                                           'body', format('Request %s waited since %s; it is yours to decide now.',
                                                          v_request.id, v_request.created_at),
                                           'recipients', (SELECT jsonb_agg(jsonb_build_object('user', u.user_id, 'address', u.email) ORDER BY u.user_id)
                                                            FROM charter.directory_users AS u
                                                           WHERE u.org_id = v_request.org_id AND u.user_id = ANY (v_managers))),
                        v_key, p_instance.trace_id);
            END IF;
            -- And in the app: the escalation reaches them even where email is not set up.
            INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key)
            VALUES (v_request.org_id, 'side_effects', v_key || '.in_app') ON CONFLICT DO NOTHING;
            IF FOUND THEN
                INSERT INTO charter.side_effects (org_id, run_id, node_id, effect_type, request, idempotency_key, trace_id)
                VALUES (v_request.org_id, v_request.run_id, v_request.node_id || '#escalation', 'notification',
                        jsonb_build_object('channel', 'in_app', 'subject', format('Approval escalated: %s %s',
                                               p_instance.entity_type, v_request.document_id),
                                           'body', format('Request %s waited since %s; it is yours to decide now.',
                                                          v_request.id, v_request.created_at),
                                           'to', array_to_string(v_managers, ', '),
                                           'recipients', (SELECT jsonb_agg(jsonb_build_object('user', m) ORDER BY m)
                                                            FROM unnest(v_managers) AS m)),
                        v_key || '.in_app', p_instance.trace_id);
            END IF;
        END IF;
    END IF;
    -- The node waits on (without a deadline now).
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, detail)
    VALUES (p_wait.run_id, p_wait.node_id, p_wait.org_id, p_wait.token, 'approval', p_wait.entity_version,
            p_wait.detail || jsonb_build_object('escalated', true, 'approvers',
                to_jsonb(CASE WHEN cardinality(v_managers) > 0 THEN v_managers ELSE v_request.approvers END)));
END;
$$;
