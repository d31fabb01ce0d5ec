-- One arrival at a node: real (along a taken edge) or a skip (an untaken one). Along a loop
-- edge the instance starts a new round over everything after the target first.
CREATE OR REPLACE FUNCTION charter._arrive(
    p_instance charter.workflow_instances, p_wf jsonb, p_node text, p_token text,
    p_skip boolean, p_outcome text, p_loop boolean)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_now timestamptz := now();  -- a value in CASE and coalesce: Citus evaluates no function there
    v_type   text := p_wf #>> ARRAY['nodes', p_node, 'type'];
    v_join   jsonb := p_wf #> ARRAY['joinRequirements', p_node];
    v_token  text := p_token;
    v_state  charter.step_states;
    v_epoch  integer;
    v_prefix text;
    v_loser  text;
BEGIN
    IF p_loop THEN
        UPDATE charter.workflow_instances AS i SET epoch = i.epoch + 1 WHERE i.id = p_instance.id AND i.org_id = p_instance.org_id
        RETURNING i.epoch INTO v_epoch;
        UPDATE charter.step_states AS s
           SET status = 'waiting', arrivals = 0, skipped_arrivals = 0, token = NULL, outcome = NULL,
               ready_at = NULL, completed_at = NULL
         WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = ANY (charter._reachable(p_wf, p_node));
        UPDATE charter.step_states AS s
           SET status = 'ready', arrivals = s.required, token = 't' || v_epoch, outcome = p_outcome, ready_at = clock_timestamp()
         WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node;
        RETURN;
    END IF;
    IF p_skip AND v_type IN ('start', 'lifecycle_state', 'lifecycle_gate', 'end', 'slot_entry') THEN
        RETURN;  -- the lifecycle waits for the document, not for counts
    END IF;
    SELECT * INTO v_state FROM charter.step_states AS s
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node FOR UPDATE;
    IF v_state.status <> 'waiting' THEN
        RETURN;  -- already started: an ANY join that has its winner
    END IF;
    IF v_type = 'parallel_join' THEN
        v_token := regexp_replace(p_token, '/[^/]*$', '');
    END IF;
    IF v_join->>'mode' = 'any' AND NOT p_skip THEN
        -- WF-16: the first arrival wins through the join's receipt; the losers are cancelled.
        INSERT INTO charter.step_receipts (run_id, idempotency_key, org_id)
        VALUES (p_instance.id, 'join:' || charter._instance_key(p_instance.id, p_node, v_token, p_instance.document_version)
                               || ':' || p_instance.epoch, p_instance.org_id)
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        UPDATE charter.step_states AS s
           SET status = 'ready', arrivals = s.arrivals + 1, token = v_token, outcome = p_outcome, ready_at = clock_timestamp()
         WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node;
        v_prefix := v_token || '/' || (v_join->>'split') || '#';
        FOR v_loser IN SELECT s.step_slug FROM charter.step_states AS s
                        WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.status IN ('ready', 'running')
                          AND left(s.token, length(v_prefix)) = v_prefix ORDER BY s.step_slug LOOP
            PERFORM charter._cancel_node(p_instance, p_wf, v_loser,
                jsonb_build_object('reason', format('lost the ANY join %s', p_node), 'join', p_node));
        END LOOP;
        RETURN;
    END IF;
    UPDATE charter.step_states AS s
       SET arrivals = s.arrivals + 1,
           skipped_arrivals = s.skipped_arrivals + CASE WHEN p_skip THEN 1 ELSE 0 END,
           token = coalesce(s.token, v_token),
           -- A rejection is final: at a merge it wins over any other outcome.
           outcome = CASE WHEN s.outcome = 'reject' THEN 'reject'
                          ELSE coalesce(CASE WHEN p_skip THEN NULL ELSE p_outcome END, s.outcome) END,
           status = CASE WHEN s.arrivals + 1 < s.required THEN 'waiting'
                         WHEN s.skipped_arrivals + CASE WHEN p_skip THEN 1 ELSE 0 END = s.arrivals + 1 THEN 'skipped'
                         ELSE 'ready' END,
           ready_at = CASE WHEN s.arrivals + 1 >= s.required THEN clock_timestamp() END,
           completed_at = CASE WHEN s.arrivals + 1 >= s.required
                                AND s.skipped_arrivals + CASE WHEN p_skip THEN 1 ELSE 0 END = s.arrivals + 1 THEN v_now END
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node
    RETURNING * INTO v_state;
    IF v_state.status = 'skipped' THEN
        -- Every way in was not taken: pass the skip on.
        PERFORM charter._node_evidence(p_instance, p_node, v_type, v_state.token, 'skipped', NULL, NULL, NULL);
        PERFORM charter._arrive(p_instance, p_wf, o.edge->>'target', v_state.token, true, NULL, false)
           FROM charter._out_edges(p_wf, p_node) AS o
          WHERE NOT coalesce((o.edge->>'loop')::boolean, false)
          ORDER BY o.n;
    END IF;
END;
$$;
