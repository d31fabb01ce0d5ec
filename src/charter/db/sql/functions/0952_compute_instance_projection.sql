-- WF-15: an instance's projection is derivable from the compiled DAG and its evidence
-- (step_executions) alone, and rebuilt from them whole: the instance's status, current
-- nodes, context and epoch, and its readiness rows (step_states: status, arrivals, skipped
-- arrivals, token, outcome). The replay applies the engine's rules in the order the evidence
-- was written: arrivals and skips (a skip passes on through a node every way into which was
-- skipped, depth first as the engine does), parallel paths' tokens, ALL and ANY joins, the
-- outcome a token carries (an approval's, an event's timeout, a rejection carried to its
-- gate), rounds after loops, retries and restarts, pauses and cancels; and the context's
-- writes (a script's assignTo, an event's payload).

-- The projection derived from evidence: {"status", "currentNodes", "activeTokens",
-- "context", "epoch", "nodes": {node: {"status", "arrivals", "skipped", "token",
-- "outcome"}}, "finishedAt", "error", "cancelReason"}. p_org_id as for get_run.
CREATE OR REPLACE FUNCTION charter.compute_instance_projection(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._run_org(p_run_id, p_org_id);
    v_wf       jsonb;
    v_st       jsonb := '{}'::jsonb;
    v_queue    jsonb := '[]'::jsonb;
    v_more     jsonb;
    v_item     jsonb;
    v_row      record;
    v_edge     record;
    v_node     text;
    v_type     text;
    v_n        jsonb;
    v_status   text := 'running';
    v_reset    text[];
    v_epoch    integer := 1;
    v_context  jsonb := '{}'::jsonb;
    v_token    text;
    v_path     integer;
    v_outcome  text;
    v_skip     boolean;
    v_finished timestamptz;
    v_error    jsonb;
    v_reason   text;
BEGIN
    SELECT v.compiled INTO v_wf FROM charter.workflow_instances AS i
      JOIN charter.workflow_versions AS v ON v.id = i.version_id
     WHERE i.id = p_run_id AND i.org_id = v_org;
    IF v_wf IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT jsonb_object_agg(n.key, jsonb_build_object('s', 'waiting', 'a', 0, 'k', 0, 't', NULL, 'o', NULL,
               'r', coalesce((v_wf #>> ARRAY['joinRequirements', n.key, 'requiredTokenCount'])::integer, 1)))
      INTO v_st FROM jsonb_each(v_wf->'nodes') AS n;
    -- A restarted instance starts at the document's state (restart_instance's startAt).
    v_queue := jsonb_build_array(jsonb_build_object('node', coalesce((
        SELECT e.output->>'startAt' FROM charter.step_executions AS e
         WHERE e.run_id = p_run_id AND e.org_id = v_org AND e.step_slug = '$instance' AND e.output ? 'startAt'
         LIMIT 1), 'sys:start'), 'skip', false, 'loop', false, 'token', 't1', 'outcome', NULL));
    FOR v_row IN SELECT NULL AS step_slug, NULL AS status, NULL::jsonb AS output, NULL::jsonb AS error,
                        NULL::text AS token, NULL::timestamptz AS finished_at, 0 AS pass
                 UNION ALL
                 (SELECT e.step_slug, e.status, e.output, e.error, e.token, e.finished_at, 1
                    FROM charter.step_executions AS e
                   WHERE e.run_id = p_run_id AND e.org_id = v_org ORDER BY e.finished_at, e.id) LOOP
        IF v_row.pass = 1 THEN
            v_node := v_row.step_slug;
            v_type := v_wf #>> ARRAY['nodes', v_node, 'type'];
            IF v_node = '$instance' THEN
                IF v_row.output ? 'retry' THEN
                    -- retry_run: a new round; the failed (and withdrawn) nodes are ready again.
                    v_status := 'running';
                    v_finished := NULL;
                    v_error := NULL;
                    v_epoch := coalesce((v_row.output->>'epoch')::integer, v_epoch + 1);
                    SELECT v_st || coalesce(jsonb_object_agg(x, (v_st->x) || jsonb_build_object('s', 'ready',
                               't', regexp_replace(coalesce(v_st #>> ARRAY[x, 't'], 't1'), '^t[0-9]+', 't' || v_epoch))), '{}')
                      INTO v_st FROM jsonb_array_elements_text(v_row.output->'retry') AS x;
                ELSIF v_row.output ? 'restart' THEN
                    -- The document changed under a region that asks again: a new round of its slot.
                    v_epoch := coalesce((v_row.output->>'epoch')::integer, v_epoch);
                    SELECT array_agg(x) INTO v_reset FROM unnest(charter._reachable(v_wf, v_row.output->>'restart')) AS x
                     WHERE v_wf #>> ARRAY['nodes', x, 'type'] NOT IN ('lifecycle_state', 'end');
                    SELECT v_st || jsonb_object_agg(x, (v_st->x) || '{"s": "waiting", "a": 0, "k": 0, "t": null, "o": null}') INTO v_st
                      FROM unnest(v_reset) AS x;
                    v_queue := v_queue || jsonb_build_array(jsonb_build_object('node', v_row.output->>'restart', 'skip', false,
                        'loop', false, 'token', 't' || v_epoch, 'outcome', NULL));
                ELSIF v_row.output ? 'paused' THEN
                    v_status := 'paused';
                ELSIF v_row.output ? 'resumed' THEN
                    v_status := 'running';
                ELSIF v_row.status = 'cancelled' THEN
                    v_status := 'cancelled';
                    v_finished := v_row.finished_at;
                    v_reason := v_row.output->>'reason';
                END IF;
            ELSIF v_type IS NOT NULL THEN
                v_n := v_st->v_node;
                IF v_n->>'s' = 'waiting' THEN
                    -- Run without its arrivals: a gate a user's transition passed.
                    v_n := v_n || jsonb_build_object('a', v_n->'r');
                END IF;
                v_n := v_n || jsonb_build_object(
                    's', CASE WHEN v_row.status IN ('running', 'completed', 'skipped', 'failed', 'cancelled')
                              THEN v_row.status ELSE v_n->>'s' END,
                    't', v_row.token);
                v_st := jsonb_set(v_st, ARRAY[v_node], v_n);
                IF v_type = 'lifecycle_state' AND v_row.status = 'running' THEN
                    -- A resting state starts the bodies attached to it.
                    SELECT v_queue || coalesce(jsonb_agg(jsonb_build_object('node', o.edge->>'target', 'skip', false, 'loop', false,
                               'token', v_row.token, 'outcome', o.edge->>'label') ORDER BY o.n), '[]')
                      INTO v_queue FROM charter._out_edges(v_wf, v_node) AS o
                     WHERE v_wf #>> ARRAY['nodes', o.edge->>'target', 'type'] = 'slot_entry';
                END IF;
                IF v_row.status = 'completed' THEN
                    -- The outcome the node's tokens carry on: an approval's decision (kept as
                    -- is when an edge is labelled with it, else a rejection travels as
                    -- 'reject'), an event's timeout, a rejection carried through.
                    v_outcome := CASE
                        WHEN v_row.output ? 'carried' THEN v_row.output->>'carried'
                        WHEN v_row.output #>> '{approval,outcome}' IS NOT NULL THEN
                            CASE WHEN EXISTS (SELECT 1 FROM charter._out_edges(v_wf, v_node) AS o
                                               WHERE o.edge->>'label' = v_row.output #>> '{approval,outcome}')
                                 THEN v_row.output #>> '{approval,outcome}'
                                 WHEN v_row.output #>> '{approval,outcome}' = 'rejected' THEN 'reject'
                                 ELSE v_row.output #>> '{approval,outcome}' END
                        WHEN coalesce((v_row.output->>'timedOut')::boolean, false) THEN 'timeout' END;
                    v_path := 0;
                    FOR v_edge IN SELECT o.edge_id, o.edge FROM charter._out_edges(v_wf, v_node) AS o ORDER BY o.n LOOP
                        IF v_row.output->'chosenEdgeIds' ? v_edge.edge_id THEN
                            v_token := v_row.token;
                            IF v_type = 'parallel_split' THEN
                                v_token := v_row.token || '/' || v_node || '#' || v_path;
                                v_path := v_path + 1;
                            END IF;
                            v_queue := v_queue || jsonb_build_array(jsonb_build_object('node', v_edge.edge->>'target', 'skip', false,
                                'loop', coalesce((v_edge.edge->>'loop')::boolean, false), 'token', v_token,
                                'outcome', coalesce(v_outcome, v_edge.edge->>'label', v_st #>> ARRAY[v_node, 'o'])));
                        ELSIF NOT coalesce((v_edge.edge->>'loop')::boolean, false) THEN
                            v_queue := v_queue || jsonb_build_array(jsonb_build_object('node', v_edge.edge->>'target', 'skip', true,
                                'loop', false, 'token', v_row.token, 'outcome', NULL));
                        END IF;
                    END LOOP;
                    -- The context's writes: a script's assignTo, an event's payload.
                    IF v_type = 'script' AND v_row.output->>'assignedTo' LIKE 'context.%' THEN
                        v_context := jsonb_set(v_context,
                            string_to_array(substr(v_row.output->>'assignedTo', length('context.') + 1), '.'),
                            coalesce(v_row.output #> '{audit,result}', 'null'), true);
                    ELSIF v_type = 'wait_event' AND v_row.output ? 'event' THEN
                        v_context := v_context || jsonb_build_object('event', v_row.output #> '{event,payload}');
                    END IF;
                    IF v_type = 'end' THEN
                        v_status := 'completed';
                        v_finished := v_row.finished_at;
                    END IF;
                ELSIF v_row.status = 'failed' THEN
                    v_status := 'failed';
                    v_finished := v_row.finished_at;
                    v_error := v_row.error;
                END IF;
            END IF;
        END IF;
        -- Deliver the queued arrivals in the engine's order: a skip passed on is delivered
        -- (with everything it passes on) before the arrivals queued after it.
        WHILE jsonb_array_length(v_queue) > 0 LOOP
            v_item := v_queue->0;
            v_queue := v_queue - 0;
            v_node := v_item->>'node';
            v_type := v_wf #>> ARRAY['nodes', v_node, 'type'];
            v_skip := (v_item->>'skip')::boolean;
            v_n := v_st->v_node;
            IF (v_item->>'loop')::boolean THEN
                -- A loop edge starts a new round over everything after its target.
                v_epoch := v_epoch + 1;
                SELECT v_st || jsonb_object_agg(x, (v_st->x) || '{"s": "waiting", "a": 0, "k": 0, "t": null, "o": null}') INTO v_st
                  FROM unnest(charter._reachable(v_wf, v_node)) AS x;
                v_st := jsonb_set(v_st, ARRAY[v_node], (v_st->v_node) || jsonb_build_object(
                    's', 'ready', 'a', v_n->'r', 't', 't' || v_epoch, 'o', v_item->'outcome'));
            ELSIF v_skip AND v_type IN ('start', 'lifecycle_state', 'lifecycle_gate', 'end', 'slot_entry') THEN
                NULL;  -- the lifecycle waits for the document, not for counts
            ELSIF v_n->>'s' <> 'waiting' THEN
                NULL;  -- already started: an ANY join that has its winner
            ELSE
                v_token := v_item->>'token';
                IF v_type = 'parallel_join' THEN
                    v_token := regexp_replace(v_token, '/[^/]*$', '');
                END IF;
                IF v_wf #>> ARRAY['joinRequirements', v_node, 'mode'] = 'any' AND NOT v_skip THEN
                    -- The first arrival wins (its losers' cancellations are in the evidence).
                    v_n := v_n || jsonb_build_object('s', 'ready', 'a', (v_n->>'a')::integer + 1, 't', v_token,
                                                     'o', v_item->'outcome');
                ELSE
                    v_n := v_n || jsonb_build_object(
                        'a', (v_n->>'a')::integer + 1,
                        'k', (v_n->>'k')::integer + CASE WHEN v_skip THEN 1 ELSE 0 END,
                        't', coalesce(v_n->>'t', v_token),
                        -- A rejection is final: at a merge it wins over any other outcome.
                        'o', CASE WHEN v_n->>'o' = 'reject' THEN 'reject'
                                  ELSE coalesce(CASE WHEN v_skip THEN NULL ELSE v_item->>'outcome' END, v_n->>'o') END);
                    IF (v_n->>'a')::integer >= (v_n->>'r')::integer THEN
                        IF v_n->>'a' = v_n->>'k' THEN
                            -- Every way in was skipped: the skip passes on, first.
                            v_n := v_n || '{"s": "skipped"}';
                            SELECT coalesce(jsonb_agg(jsonb_build_object('node', o.edge->>'target', 'skip', true, 'loop', false,
                                       'token', v_n->>'t', 'outcome', NULL) ORDER BY o.n), '[]')
                              INTO v_more FROM charter._out_edges(v_wf, v_node) AS o
                             WHERE NOT coalesce((o.edge->>'loop')::boolean, false);
                            v_queue := v_more || v_queue;
                        ELSE
                            v_n := v_n || '{"s": "ready"}';
                        END IF;
                    END IF;
                END IF;
                v_st := jsonb_set(v_st, ARRAY[v_node], v_n);
            END IF;
        END LOOP;
    END LOOP;
    RETURN jsonb_build_object(
        'status', v_status,
        'currentNodes', CASE WHEN v_status IN ('running', 'paused') THEN coalesce((
            SELECT jsonb_agg(k ORDER BY k) FROM jsonb_each(v_st) AS x(k, v) WHERE v->>'s' IN ('ready', 'running')), '[]') ELSE '[]' END,
        'activeTokens', CASE WHEN v_status IN ('running', 'paused') THEN coalesce((
            SELECT jsonb_agg(DISTINCT v->>'t') FROM jsonb_each(v_st) AS x(k, v)
             WHERE v->>'s' = 'running' AND v->>'t' IS NOT NULL), '[]') ELSE '[]' END,
        'context', v_context,
        'epoch', v_epoch,
        'nodes', (SELECT jsonb_object_agg(k, jsonb_build_object('status', v->'s', 'arrivals', v->'a', 'skipped', v->'k',
                                                                'token', v->'t', 'outcome', v->'o'))
                    FROM jsonb_each(v_st) AS x(k, v)),
        'finishedAt', v_finished,
        'error', v_error,
        'cancelReason', v_reason);
END;
$$;
