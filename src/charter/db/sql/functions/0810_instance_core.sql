-- The instance engine (seed 002 § Runtime Engine): a document's workflow instance is a run of
-- the execution core (runs, step_states, step_executions, step_receipts) whose nodes the
-- engine executes in SQL. Every function here runs under the document's lock (WF-01,
-- taken by the caller) in one transaction.
--
-- Readiness: a node is ready when its arrivals (skip arrivals included) reach its compiled
-- requirement; untaken edges deliver skips, so merges after exclusive branches never wait
-- for the branch not taken. Tokens name paths: 't<epoch>' is the main path of a round, a
-- parallel_split's path i adds '/<split>#<i>', a parallel_join drops it again. A lifecycle
-- loop (reject → draft) starts a new round (epoch) over everything after its target.

-- Records a node's evidence: completes its running row when it has one (status moves only
-- forward, see _restrict_step_execution_updates), else inserts a finished row.
CREATE OR REPLACE FUNCTION charter._node_evidence(
    p_instance charter.workflow_instances, p_node text, p_node_type text, p_token text,
    p_status text, p_output jsonb, p_error jsonb, p_actor text, p_key text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_row record;
BEGIN
    IF p_status <> 'running' AND p_node NOT LIKE '$%' THEN
        PERFORM charter._count_nodes_run(1);  -- the worker's figures (0904_figures.sql)
    END IF;
    SELECT e.created_at, e.id INTO v_row FROM charter.step_executions AS e
     WHERE e.run_id = p_instance.id AND e.org_id = p_instance.org_id AND e.step_slug = p_node AND e.token = p_token AND e.status = 'running'
     ORDER BY e.id DESC LIMIT 1;
    IF FOUND AND p_status <> 'running' THEN
        UPDATE charter.step_executions AS e
           SET status = p_status, terminal = true, output = coalesce(e.output, '{}'::jsonb) || coalesce(p_output, '{}'::jsonb),
               error = p_error, finished_at = now()
         WHERE e.created_at = v_row.created_at AND e.id = v_row.id AND e.org_id = p_instance.org_id;
        RETURN;
    END IF;
    INSERT INTO charter.step_executions (
        org_id, run_id, step_slug, status, terminal, idempotency_key, started_at, finished_at,
        output, error, token, entity_version, node_type, actor)
    VALUES (p_instance.org_id, p_instance.id, p_node, p_status, p_status <> 'running',
            coalesce(p_key, charter._instance_key(p_instance.id, p_node, p_token, p_instance.document_version)), now(), now(),
            coalesce(p_output, '{}'::jsonb) || jsonb_build_object('traceId', p_instance.trace_id),
            p_error, p_token, p_instance.document_version, p_node_type, p_actor);
END;
$$;

-- Rewrites the projection (seed 002 § Projection Model): the nodes where tokens are.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._instance_projection(p_run text, p_org_id text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    UPDATE charter.workflow_instances AS i
       SET current_nodes = coalesce((
               SELECT array_agg(s.step_slug ORDER BY s.step_slug) FROM charter.step_states AS s
                WHERE s.run_id = p_run AND s.org_id = p_org_id AND s.status IN ('ready', 'running')), '{}'),
           updated_at = now()
     WHERE i.id = p_run AND i.org_id = p_org_id;
END;
$$;

-- Withdraws a node's pending work (its wait, approval request, undelivered side effects)
-- and records it as cancelled with the reason.
CREATE OR REPLACE FUNCTION charter._cancel_node(p_instance charter.workflow_instances, p_wf jsonb, p_node text, p_reason jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_state charter.step_states;
BEGIN
    UPDATE charter.step_states AS s SET status = 'cancelled', completed_at = now()
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node AND s.status IN ('ready', 'running')
    RETURNING * INTO v_state;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    DELETE FROM charter.instance_waits AS w WHERE w.run_id = p_instance.id AND w.org_id = p_instance.org_id AND w.node_id = p_node;
    UPDATE charter.approval_requests AS a SET status = 'cancelled', closed_at = now(), outcome_reason = p_reason->>'reason'
     WHERE a.run_id = p_instance.id AND a.org_id = p_instance.org_id AND a.node_id = p_node AND a.status = 'pending';
    UPDATE charter.side_effects AS x SET status = 'cancelled', completed_at = now()
     WHERE x.run_id = p_instance.id AND x.org_id = p_instance.org_id AND x.node_id = p_node AND x.status IN ('pending', 'failed');
    PERFORM charter._node_evidence(p_instance, p_node, p_wf #>> ARRAY['nodes', p_node, 'type'],
                                   coalesce(v_state.token, 't' || p_instance.epoch), 'cancelled', NULL, p_reason, NULL);
END;
$$;

-- Cancels every node of the instance that is ready or running, except p_keep.
CREATE OR REPLACE FUNCTION charter._cancel_active(p_instance charter.workflow_instances, p_wf jsonb, p_keep text[], p_reason jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_node text;
BEGIN
    FOR v_node IN SELECT s.step_slug FROM charter.step_states AS s
                   WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.status IN ('ready', 'running')
                     AND NOT (s.step_slug = ANY (coalesce(p_keep, '{}')))
                   ORDER BY s.step_slug LOOP
        PERFORM charter._cancel_node(p_instance, p_wf, v_node, p_reason);
    END LOOP;
END;
$$;

-- Ends an instance (completed, failed or cancelled) and its run, withdrawing what is left.
-- A paused instance's held events are let go (with no instance they change nothing).
CREATE OR REPLACE FUNCTION charter._finish_instance(
    p_run text, p_org_id text, p_status text, p_error jsonb, p_reason text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_wf       jsonb;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_run AND i.org_id = p_org_id;
    IF v_instance.status NOT IN ('running', 'paused') THEN
        RETURN;
    END IF;
    SELECT v.compiled INTO v_wf FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id;
    PERFORM charter._cancel_active(v_instance, v_wf, '{}',
        jsonb_build_object('reason', coalesce(p_reason, 'the instance ' || p_status)));
    IF p_status = 'cancelled' THEN
        PERFORM charter._node_evidence(v_instance, '$instance', 'cancel', 't' || v_instance.epoch, 'cancelled',
            jsonb_build_object('reason', p_reason), NULL, NULL);
    END IF;
    UPDATE charter.workflow_instances
       SET status = p_status, completed_at = now(), updated_at = now(), error = p_error,
           cancel_reason = CASE WHEN p_status = 'cancelled' THEN p_reason END
     WHERE id = p_run AND org_id = p_org_id;
    UPDATE charter.runs
       SET status = p_status, error = p_error, finished_at = now(), updated_at = now()
     WHERE id = p_run AND org_id = p_org_id AND status = 'running';
    PERFORM charter._instance_projection(p_run, p_org_id);
    IF v_instance.status = 'paused' THEN
        PERFORM charter._release_held_events(p_org_id, v_instance.document_id);
    END IF;
END;
$$;

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
                                AND s.skipped_arrivals + CASE WHEN p_skip THEN 1 ELSE 0 END = s.arrivals + 1 THEN now() END
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

-- Finishes a node: evidence, then arrivals along the chosen edges (a parallel_split gives
-- each of its paths its own token) and skips along the others.
CREATE OR REPLACE FUNCTION charter._complete_node(
    p_instance charter.workflow_instances, p_wf jsonb, p_node text, p_chosen text[], p_output jsonb,
    p_actor text DEFAULT NULL, p_outcome text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_type  text := p_wf #>> ARRAY['nodes', p_node, 'type'];
    v_state charter.step_states;
    v_edge  record;
    v_path  integer := 0;
    v_token text;
BEGIN
    UPDATE charter.step_states AS s SET status = 'completed', completed_at = now()
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node AND s.status IN ('ready', 'running')
    RETURNING * INTO v_state;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    PERFORM charter._node_evidence(p_instance, p_node, v_type, v_state.token, 'completed',
        coalesce(p_output, '{}'::jsonb) || jsonb_build_object('chosenEdgeIds', to_jsonb(coalesce(p_chosen, '{}'))),
        NULL, p_actor);
    FOR v_edge IN SELECT o.edge_id, o.edge FROM charter._out_edges(p_wf, p_node) AS o ORDER BY o.n LOOP
        IF v_edge.edge_id = ANY (coalesce(p_chosen, '{}')) THEN
            v_token := v_state.token;
            IF v_type = 'parallel_split' THEN
                v_token := v_state.token || '/' || p_node || '#' || v_path;
                v_path := v_path + 1;
            END IF;
            PERFORM charter._arrive(p_instance, p_wf, v_edge.edge->>'target', v_token, false,
                coalesce(p_outcome, v_edge.edge->>'label', v_state.outcome),
                coalesce((v_edge.edge->>'loop')::boolean, false));
            -- A loop starts a new round: read the instance's epoch again.
            SELECT * INTO p_instance FROM charter.workflow_instances AS i WHERE i.id = p_instance.id AND i.org_id = p_instance.org_id;
        ELSIF NOT coalesce((v_edge.edge->>'loop')::boolean, false) THEN
            PERFORM charter._arrive(p_instance, p_wf, v_edge.edge->>'target', v_state.token, true, NULL, false);
        END IF;
    END LOOP;
END;
$$;

-- The forward edges out of a node (all of them: a node without branching takes every way out).
CREATE OR REPLACE FUNCTION charter._forward_edges(p_wf jsonb, p_node text, p_except_label text DEFAULT NULL)
RETURNS text[]
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') FROM charter._out_edges(p_wf, p_node) AS o
             WHERE p_except_label IS NULL OR o.edge->>'label' IS DISTINCT FROM p_except_label);
END;
$$;
