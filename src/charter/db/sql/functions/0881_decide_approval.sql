-- client.approvals.decide: one decision of one approver on the exact version the request is
-- pinned to. Refused (and nothing written) when the request is unknown, closed, the actor is
-- not its approver, is its requester or someone else segregation of duties leaves out
-- (_approval_exclusions), decided already, or the version is not the pinned one or the
-- document moved on. Under the document's lock, so concurrent decisions serialize and
-- the request closes once.
CREATE OR REPLACE FUNCTION charter.decide_approval(
    p_org_id text, p_request_id text, p_decision text, p_actor text, p_entity_version integer,
    p_comment text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_request  charter.approval_requests;
    v_version  integer;
    v_outcome  text;
    v_decision charter.approval_decisions;
    v_instance charter.workflow_instances;
    v_document charter.documents;
    v_next     charter.approval_requests;
    v_excluded jsonb;
    v_stage    integer;
    v_message  text;
    v_hint     text;
    v_error    jsonb;
BEGIN
    IF p_decision IS NULL OR p_decision NOT IN ('approved', 'rejected', 'abstained') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH057',
            MESSAGE = format('%L is not a decision', p_decision),
            HINT = 'Decide approved, rejected or abstained.';
    END IF;
    SELECT * INTO v_request FROM charter.approval_requests AS r WHERE r.org_id = v_org AND r.id = p_request_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH057',
            MESSAGE = format('Approval request %L does not exist in org %L', p_request_id, v_org),
            HINT = 'Take request ids from client.approvals.inbox(user).';
    END IF;
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_org || '/' || v_request.document_id));
    SELECT * INTO v_request FROM charter.approval_requests AS r
     WHERE r.id = p_request_id AND r.org_id = v_org FOR UPDATE;
    IF v_request.status IN ('approved', 'rejected', 'cancelled') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH055',
            MESSAGE = format('Approval request %L is %s', p_request_id, v_request.status),
            HINT = 'Decide the request that is pending now (client.approvals.inbox).';
    END IF;
    SELECT d.version INTO v_version FROM charter.documents AS d
     WHERE d.org_id = v_org AND d.id = v_request.document_id;
    IF p_entity_version IS DISTINCT FROM v_request.entity_version OR v_version <> v_request.entity_version THEN
        RAISE EXCEPTION USING ERRCODE = 'CH052',
            MESSAGE = format('Request %L is for version %s of document %L%s, not %s', p_request_id,
                             v_request.entity_version, v_request.document_id,
                             CASE WHEN v_version <> v_request.entity_version
                                  THEN format(', which is at version %s now', v_version) ELSE '' END,
                             coalesce(p_entity_version::text, 'no version')),
            HINT = 'Look at the version the request is pinned to (client.approvals.snapshot) and decide that one.';
    END IF;
    IF v_request.status <> 'pending' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH055',
            MESSAGE = format('Approval request %L is %s%s', p_request_id, v_request.status,
                             coalesce(format(' (by version %s)', v_request.voided_version), '')),
            HINT = 'Decide the request that is pending now (client.approvals.inbox).';
    END IF;
    IF p_actor = v_request.requester THEN
        RAISE EXCEPTION USING ERRCODE = 'CH056',
            MESSAGE = format('%s asked for this approval and may not approve it', p_actor),
            HINT = 'Another approver decides.';
    END IF;
    -- The second line of defence: whoever segregation of duties leaves out of this request now
    -- (an author of the changes it covers, an earlier stage's decider) may not decide it, even
    -- were they among its approvers.
    v_excluded := charter._approval_exclusions(v_org, v_request.document_id, v_request.entity_version,
        v_request.requester, v_request.run_id, v_request.node_id, v_request.token, v_request.config);
    IF v_excluded ? p_actor THEN
        RAISE EXCEPTION USING ERRCODE = 'CH070',
            MESSAGE = CASE WHEN v_excluded->>p_actor LIKE 'decided%'
                THEN format('%s %s of chain %s and may not decide stage %s of it too (request %L)', p_actor,
                            v_excluded->>p_actor, v_request.config->>'chainId', (v_request.config->>'stage')::integer + 1,
                            p_request_id)
                ELSE format('%s %s of document %L, a change since its last approved version, and may not approve it (request %L)',
                            p_actor, v_excluded->>p_actor, v_request.document_id, p_request_id) END,
            HINT = CASE WHEN v_excluded->>p_actor LIKE 'decided%'
                THEN 'Another approver decides; a chain defined with allowSameApprover lets one person decide several stages.'
                ELSE 'Another approver decides: nobody approves their own changes.' END;
    END IF;
    IF NOT (p_actor = ANY (v_request.approvers)) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH053',
            MESSAGE = format('%L is not an approver of request %L (its approvers: %s)', p_actor, p_request_id,
                             array_to_string(v_request.approvers, ', ')),
            HINT = 'The approvers were fixed when the request was made.';
    END IF;
    IF EXISTS (SELECT 1 FROM charter.approval_decisions AS d
                WHERE d.request_id = p_request_id AND d.org_id = v_org AND d.actor = p_actor) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH054',
            MESSAGE = format('%s already decided request %L', p_actor, p_request_id),
            HINT = 'A decision is final; a new version of the document asks again.';
    END IF;
    INSERT INTO charter.approval_decisions (org_id, request_id, document_id, actor, decision, entity_version, comment)
    VALUES (v_org, p_request_id, v_request.document_id, p_actor, p_decision, p_entity_version, p_comment)
    RETURNING * INTO v_decision;
    v_outcome := charter._request_outcome(v_request);
    IF v_outcome <> 'pending' THEN
        UPDATE charter.approval_requests SET status = v_outcome, closed_at = now(),
               outcome_reason = CASE WHEN v_outcome = 'rejected' THEN coalesce(p_comment, 'rejected') END
         WHERE id = p_request_id AND org_id = v_org;
    END IF;
    IF v_outcome = 'approved' AND v_request.config ? 'stages'
       AND (v_request.config->>'stage')::integer + 1 < jsonb_array_length(v_request.config->'stages') THEN
        -- A chain: the next stage asks its approvers, on the same version; its escalation
        -- deadline counts from now, when it opens.
        v_stage := (v_request.config->>'stage')::integer + 1;
        SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = v_request.run_id AND i.org_id = v_request.org_id;
        SELECT * INTO v_document FROM charter.documents AS d WHERE d.org_id = v_org AND d.id = v_request.document_id;
        BEGIN
            v_next := charter._open_request(v_instance, v_document, v_request.node_id, v_request.token,
                (v_request.config->'stages'->v_stage)
                  || (v_request.config - '{approvers,decision}'::text[])
                  || jsonb_build_object('stage', v_stage),
                charter._instance_vars(v_instance, v_document));
        EXCEPTION WHEN SQLSTATE 'CH051' THEN
            -- Nobody may decide the next stage: the decision stands, and the instance fails at
            -- once with APPROVERS_EMPTY (the worker resumes the wait with the error).
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_hint = PG_EXCEPTION_HINT;
            v_error := jsonb_build_object('code', 'APPROVERS_EMPTY', 'sqlstate', 'CH051', 'message', v_message,
                                          'hint', v_hint, 'node', v_request.node_id, 'stage', v_stage);
            UPDATE charter.instance_waits AS w
               SET resume = jsonb_build_object('error', v_error), due_at = now()
             WHERE w.run_id = v_request.run_id AND w.org_id = v_request.org_id AND w.node_id = v_request.node_id
               AND w.kind = 'approval';
            PERFORM pg_notify('charter_events', v_org);
            RETURN jsonb_build_object('decisionId', v_decision.id, 'requestId', p_request_id, 'decision', p_decision,
                                      'requestStatus', v_outcome, 'entityVersion', p_entity_version, 'error', v_error);
        END;
        UPDATE charter.instance_waits AS w
           SET detail = (w.detail - 'escalated')
                        || jsonb_build_object('requestId', v_next.id, 'stage', v_stage, 'approvers', to_jsonb(v_next.approvers)),
               due_at = charter._now(v_request.org_id) + (w.detail->>'escalateAfter')::interval
         WHERE w.run_id = v_request.run_id AND w.org_id = v_request.org_id AND w.node_id = v_request.node_id AND w.kind = 'approval';
        RETURN jsonb_build_object('decisionId', v_decision.id, 'requestId', p_request_id, 'decision', p_decision,
                                  'requestStatus', v_outcome, 'entityVersion', p_entity_version, 'nextRequestId', v_next.id);
    END IF;
    IF v_outcome <> 'pending' THEN
        UPDATE charter.instance_waits AS w
           SET resume = jsonb_build_object('outcome', v_outcome, 'requestId', p_request_id,
                   'actor', p_actor, 'reason', p_comment,
                   'decisions', (SELECT jsonb_agg(jsonb_build_object('id', d.id, 'requestId', d.request_id,
                                                                    'actor', d.actor, 'decision', d.decision,
                                                                    'entityVersion', d.entity_version, 'comment', d.comment)
                                                  ORDER BY d.id)
                                   FROM charter.approval_decisions AS d
                                   JOIN charter.approval_requests AS r ON r.id = d.request_id AND d.org_id = r.org_id
                                  WHERE r.run_id = v_request.run_id AND r.org_id = v_request.org_id AND r.node_id = v_request.node_id
                                    AND r.token = v_request.token AND d.voided_at IS NULL)),
               due_at = now()
         WHERE w.run_id = v_request.run_id AND w.org_id = v_request.org_id AND w.node_id = v_request.node_id AND w.kind = 'approval';
        PERFORM pg_notify('charter_events', v_org);
    END IF;
    RETURN jsonb_build_object('decisionId', v_decision.id, 'requestId', p_request_id, 'decision', p_decision,
                              'requestStatus', v_outcome, 'entityVersion', p_entity_version);
END;
$$;
