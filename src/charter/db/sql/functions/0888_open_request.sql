-- Opens the request of one approval (an inline node, or one stage of a chain), pinned to the
-- document's current version, its approvers resolved now and fixed. Segregation of duties
-- holds by construction: whoever _approval_exclusions leaves out (the requester, the authors
-- of the changes since the last approved version, an earlier stage's decider) is not among
-- the approvers, and a delegation to such a person is not applied (the approver keeps the
-- request). The people left out are recorded with why. Nobody left → APPROVERS_EMPTY.
CREATE OR REPLACE FUNCTION charter._open_request(
    p_instance charter.workflow_instances, p_document charter.documents, p_node text, p_token text,
    p_config jsonb, p_vars jsonb)
RETURNS charter.approval_requests
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_request   charter.approval_requests;
    v_resolved  text[];
    v_requester text;
    v_excluded  jsonb;
    v_kept      text[];
    v_approvers text[];
    v_delegated jsonb;
BEGIN
    v_resolved := charter._resolve_approvers(p_instance, p_node, p_config, p_vars);
    v_requester := charter._approval_requester(p_instance.org_id, p_document.id, p_document.version, p_instance.actor);
    v_excluded := charter._approval_exclusions(p_instance.org_id, p_document.id, p_document.version, v_requester,
                                               p_instance.id, p_node, p_token, p_config);
    v_kept := ARRAY(SELECT a FROM unnest(v_resolved) AS a WHERE NOT v_excluded ? a ORDER BY a);
    IF cardinality(v_kept) = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH051',
            MESSAGE = format('The approvers of %s%s on version %s of document %L resolve to %s, and none may approve it: %s',
                             p_node, coalesce(format(' (stage %s of chain %s)', (p_config->>'stage')::integer + 1,
                                                     p_config->>'chainId'), ''),
                             p_document.version, p_document.id, array_to_string(v_resolved, ', '),
                             (SELECT string_agg(format('%s (%s)', a, v_excluded->>a), ', ' ORDER BY a)
                                FROM unnest(v_resolved) AS a)),
            HINT = 'Nobody approves their own request or their own changes: give the approvers'' role to someone '
                   'who neither asked for this approval nor changed the document since its last approval, '
                   'then retry the instance.';
    END IF;
    -- Delegations in force now send a kept approver's request to the delegate, unless the
    -- delegate is left out of this request.
    SELECT coalesce(jsonb_object_agg(a, g.to_user), '{}'::jsonb) INTO v_delegated
      FROM unnest(v_kept) AS a
      JOIN LATERAL (SELECT x.to_user FROM charter.approval_delegations AS x
                     WHERE x.org_id = p_instance.org_id AND x.from_user = a
                       AND x.starts_at <= charter._now(p_instance.org_id) AND x.ends_at > charter._now(p_instance.org_id)
                     ORDER BY x.id DESC LIMIT 1) AS g ON NOT v_excluded ? g.to_user;
    v_approvers := ARRAY(SELECT DISTINCT coalesce(v_delegated->>a, a) FROM unnest(v_kept) AS a ORDER BY 1);
    INSERT INTO charter.approval_requests (org_id, run_id, node_id, token, document_id, entity_version,
                                           snapshot_version, config, approvers, decision, requester, delegated,
                                           excluded)
    VALUES (p_instance.org_id, p_instance.id, p_node, p_token, p_document.id, p_document.version,
            p_document.version, p_config, v_approvers, coalesce(p_config->>'decision', 'any'), v_requester,
            v_delegated,
            -- Who was left out that the approvers named, or a delegation would have reached.
            coalesce((SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(v_excluded) AS e
                       WHERE e.key = ANY (v_resolved) OR EXISTS (
                             SELECT 1 FROM charter.approval_delegations AS x
                              WHERE x.org_id = p_instance.org_id AND x.to_user = e.key AND x.from_user = ANY (v_kept)
                                AND x.starts_at <= charter._now(p_instance.org_id) AND x.ends_at > charter._now(p_instance.org_id))), '{}'::jsonb))
    RETURNING * INTO v_request;
    RETURN v_request;
END;
$$;
