-- An approval node starts: inline → one request; chain → the chain's version pinned now and
-- its first stage's request. The node waits (kind approval).
CREATE OR REPLACE FUNCTION charter._start_approval(
    p_instance charter.workflow_instances, p_document charter.documents, p_node text, p_token text,
    p_config jsonb, p_vars jsonb, p_key text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_chain   charter.approval_chains;
    v_request charter.approval_requests;
    v_detail  jsonb;
BEGIN
    IF p_config->>'mode' = 'chain' THEN
        SELECT * INTO v_chain FROM charter.approval_chains AS c
         WHERE c.org_id = p_instance.org_id AND c.chain_id = p_config->>'chainId' ORDER BY c.version DESC LIMIT 1;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'CH051',
                MESSAGE = format('Approval %s runs chain %L, which org %L has not defined', p_node,
                                 p_config->>'chainId', p_instance.org_id),
                HINT = 'Define it: client.approvals.define_chain(chain_id, stages=[...]).';
        END IF;
        v_request := charter._open_request(p_instance, p_document, p_node, p_token,
            (v_chain.stages->0) || jsonb_build_object('chainId', v_chain.chain_id, 'chainVersion', v_chain.version,
                                                      'stage', 0, 'stages', v_chain.stages,
                                                      'allowSameApprover', v_chain.allow_same_approver), p_vars);
        v_detail := jsonb_build_object('requestId', v_request.id, 'entityVersion', v_request.entity_version,
                                       'approvers', to_jsonb(v_request.approvers), 'chainId', v_chain.chain_id,
                                       'chainVersion', v_chain.version, 'stage', 0);
    ELSE
        v_request := charter._open_request(p_instance, p_document, p_node, p_token, p_config, p_vars);
        v_detail := jsonb_build_object('requestId', v_request.id, 'entityVersion', v_request.entity_version,
                                       'approvers', to_jsonb(v_request.approvers), 'decision', v_request.decision);
    END IF;
    PERFORM charter._wait(p_instance, p_node, 'approval', p_token, 'approval', p_key, NULL,
        charter._now(p_instance.org_id) + (p_config->>'escalateAfter')::interval, NULL,
        v_detail || jsonb_strip_nulls(jsonb_build_object('escalateAfter', p_config->>'escalateAfter')));
END;
$$;
