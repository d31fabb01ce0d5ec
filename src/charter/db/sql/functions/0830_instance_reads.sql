-- Reading an instance: the document's workflow (run, status, current nodes, what it waits
-- for, whether anything is runnable), and WF-15's projection derived from evidence alone.

-- What a document's instance waits for: a transition (a state's gates), an approval, an
-- event, a timer, a delivery or a handler task; with detail.
CREATE OR REPLACE FUNCTION charter._waiting_for(p_run text, p_org_id text, p_wf jsonb)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(jsonb_agg(x.item ORDER BY x.node), '[]'::jsonb) FROM (
        SELECT w.node_id AS node, jsonb_build_object(
                   'kind', CASE w.kind WHEN 'handler' THEN 'task' ELSE w.kind END, 'node', w.node_id,
                   'detail', w.detail || jsonb_strip_nulls(jsonb_build_object('eventKey', w.event_key, 'dueAt', w.due_at,
                                                                              'lastError', w.last_error))) AS item
          FROM charter.instance_waits AS w WHERE w.run_id = p_run AND w.org_id = p_org_id
        UNION ALL
        SELECT s.step_slug, jsonb_build_object('kind', 'transition', 'node', s.step_slug, 'detail', jsonb_build_object(
                   'state', p_wf #>> ARRAY['nodes', s.step_slug, 'config', 'state'],
                   'gates', (SELECT coalesce(jsonb_agg(p_wf #>> ARRAY['nodes', o.edge->>'target', 'config', 'gate'] ORDER BY o.n), '[]')
                               FROM charter._out_edges(p_wf, s.step_slug) AS o
                              WHERE p_wf #>> ARRAY['nodes', o.edge->>'target', 'type'] = 'lifecycle_gate')))
          FROM charter.step_states AS s
         WHERE s.run_id = p_run AND s.org_id = p_org_id AND s.status = 'running'
           AND p_wf #>> ARRAY['nodes', s.step_slug, 'type'] = 'lifecycle_state'
           AND NOT EXISTS (SELECT 1 FROM charter.step_states AS b
                            WHERE b.run_id = p_run AND b.org_id = p_org_id AND b.status IN ('ready', 'running')
                              AND p_wf #>> ARRAY['nodes', b.step_slug, 'type'] NOT IN ('lifecycle_state'))
    ) AS x
$$;

-- A document's workflow instance (its latest), or null: run id, status, current nodes,
-- waits (a failed one: a fix, with its error), error, and `runnable` — whether the engine still has something to do right now
-- (an unapplied event, a ready node, a due wait, a queued handler task).
CREATE OR REPLACE FUNCTION charter.document_workflow(p_org_id text, p_document_id text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_instance charter.workflow_instances;
    v_wf       jsonb;
    v_pending  boolean;
    v_type     text;
BEGIN
    SELECT d.entity_type INTO v_type FROM charter.documents AS d WHERE d.org_id = v_org AND d.id = p_document_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH030',
            MESSAGE = format('Document %L does not exist in org %L', p_document_id, v_org),
            HINT = 'Check the document id and the client''s org.';
    END IF;
    v_pending := EXISTS (SELECT 1 FROM charter.document_events AS e
                          WHERE e.org_id = v_org AND e.document_id = p_document_id
                            AND e.status IN ('pending', 'processing', 'failed'));
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.org_id = v_org AND i.entity_type = v_type AND i.document_id = p_document_id
     ORDER BY (i.status IN ('running', 'paused')) DESC, i.started_at DESC LIMIT 1;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('runId', NULL, 'status', NULL, 'runnable', v_pending, 'pendingEvents', v_pending,
                                  'currentNodes', '[]'::jsonb, 'waitingFor', '[]'::jsonb);
    END IF;
    SELECT v.compiled INTO v_wf FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id;
    RETURN jsonb_build_object(
        'runId', v_instance.id, 'status', v_instance.status, 'versionId', v_instance.version_id,
        'workflow', (SELECT v.workflow_slug FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id),
        'documentVersion', v_instance.document_version, 'currentNodes', to_jsonb(v_instance.current_nodes),
        'context', v_instance.context, 'error', v_instance.error, 'cancelReason', v_instance.cancel_reason,
        'startedAt', v_instance.started_at, 'completedAt', v_instance.completed_at,
        -- A failed instance waits for a fix: someone removes the cause its error names (say, an
        -- approval nobody may decide: APPROVERS_EMPTY) and retries it (retry_run).
        'waitingFor', CASE WHEN v_instance.status IN ('running', 'paused') THEN charter._waiting_for(v_instance.id, v_instance.org_id, v_wf)
                           WHEN v_instance.status = 'failed' AND v_instance.error IS NOT NULL THEN jsonb_build_array(jsonb_build_object(
                               'kind', 'fix', 'node', coalesce(v_instance.error->>'node', '$instance'), 'detail', v_instance.error))
                           ELSE '[]'::jsonb END,
        'pendingEvents', v_pending,
        -- A paused instance's events wait for its resume, not for the engine.
        'runnable', v_pending AND v_instance.status <> 'paused' OR v_instance.status = 'running' AND (
               EXISTS (SELECT 1 FROM charter.step_states AS s WHERE s.run_id = v_instance.id AND s.org_id = v_instance.org_id AND s.status = 'ready')
            OR EXISTS (SELECT 1 FROM charter.instance_waits AS w
                        WHERE w.run_id = v_instance.id AND w.org_id = v_instance.org_id AND (w.kind = 'handler' OR w.due_at <= charter._now()))
            -- An effect a worker is sending, or will send now (not one waiting to retry).
            OR EXISTS (SELECT 1 FROM charter.side_effects AS x
                        WHERE x.run_id = v_instance.id AND x.org_id = v_instance.org_id
                          AND (x.status = 'processing' OR (x.status IN ('pending', 'failed') AND x.next_retry_at <= now())))));
END;
$$;

-- The steps of an instance's run: every node execution with its evidence, in order.
-- p_org_id is the instance's org (looked up by id when null), as for get_run.
CREATE OR REPLACE FUNCTION charter.instance_steps(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'node', e.step_slug, 'nodeType', e.node_type, 'token', e.token, 'status', e.status,
               'entityVersion', e.entity_version, 'actor', e.actor, 'idempotencyKey', e.idempotency_key,
               'output', e.output, 'error', e.error, 'chosenEdgeIds', e.output->'chosenEdgeIds',
               'startedAt', e.started_at, 'finishedAt', e.finished_at)
           ORDER BY e.finished_at, e.id), '[]'::jsonb)
      FROM charter.step_executions AS e
     WHERE e.run_id = p_run_id AND e.org_id = charter._run_org(p_run_id, p_org_id)
$$;

-- WF-15: an instance's projection derived from the compiled DAG and its evidence alone,
-- replaying the engine's rules (arrivals and skips, ANY joins, rounds after loops and
-- restarts): {"status", "currentNodes", "activeTokens"}. p_org_id as for get_run.
CREATE OR REPLACE FUNCTION charter.compute_instance_projection(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._run_org(p_run_id, p_org_id);
    v_wf     jsonb;
    v_st     jsonb := '{}'::jsonb;
    v_tok    jsonb := '{}'::jsonb;
    v_queue  jsonb := '[]'::jsonb;
    v_item   jsonb;
    v_row    record;
    v_edge   record;
    v_node   text;
    v_type   text;
    v_n      jsonb;
    v_status text := 'running';
    v_reset  text[];
BEGIN
    SELECT v.compiled INTO v_wf FROM charter.workflow_instances AS i
      JOIN charter.workflow_versions AS v ON v.id = i.version_id
     WHERE i.id = p_run_id AND i.org_id = v_org;
    IF v_wf IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT jsonb_object_agg(n.key, jsonb_build_object('s', 'waiting', 'a', 0, 'k', 0,
               'r', coalesce((v_wf #>> ARRAY['joinRequirements', n.key, 'requiredTokenCount'])::integer, 1)))
      INTO v_st FROM jsonb_each(v_wf->'nodes') AS n;
    -- A restarted instance starts at the document's state (restart_instance's startAt).
    v_queue := jsonb_build_array(jsonb_build_object('node', coalesce((
        SELECT e.output->>'startAt' FROM charter.step_executions AS e
         WHERE e.run_id = p_run_id AND e.org_id = v_org AND e.step_slug = '$instance' AND e.output ? 'startAt'
         LIMIT 1), 'sys:start'), 'skip', false, 'loop', false));
    FOR v_row IN SELECT NULL AS step_slug, NULL AS status, NULL::jsonb AS output, NULL::text AS token, 0 AS pass
                 UNION ALL
                 (SELECT e.step_slug, e.status, e.output, e.token, 1 FROM charter.step_executions AS e
                   WHERE e.run_id = p_run_id AND e.org_id = v_org ORDER BY e.finished_at, e.id) LOOP
        IF v_row.pass = 1 THEN
            v_node := v_row.step_slug;
            v_type := v_wf #>> ARRAY['nodes', v_node, 'type'];
            IF v_node = '$instance' THEN
                IF v_row.output ? 'retry' THEN
                    v_status := 'running';
                    SELECT v_st || coalesce(jsonb_object_agg(x, (v_st->x) || '{"s": "ready"}'), '{}') INTO v_st
                      FROM jsonb_array_elements_text(v_row.output->'retry') AS x;
                ELSIF v_row.output ? 'restart' THEN
                    SELECT array_agg(x) INTO v_reset FROM unnest(charter._reachable(v_wf, v_row.output->>'restart')) AS x
                     WHERE v_wf #>> ARRAY['nodes', x, 'type'] NOT IN ('lifecycle_state', 'end');
                    SELECT v_st || jsonb_object_agg(x, (v_st->x) || '{"s": "waiting", "a": 0, "k": 0}') INTO v_st
                      FROM unnest(v_reset) AS x;
                    v_queue := v_queue || jsonb_build_array(jsonb_build_object('node', v_row.output->>'restart', 'skip', false, 'loop', false));
                ELSIF v_row.output ? 'paused' THEN
                    v_status := 'paused';
                ELSIF v_row.output ? 'resumed' THEN
                    v_status := 'running';
                ELSIF v_row.status = 'cancelled' THEN
                    v_status := 'cancelled';
                END IF;
            ELSIF v_type IS NOT NULL THEN
                IF v_type = 'lifecycle_state' THEN
                    SELECT v_queue || coalesce(jsonb_agg(jsonb_build_object('node', o.edge->>'target', 'skip', false, 'loop', false) ORDER BY o.n), '[]')
                      INTO v_queue FROM charter._out_edges(v_wf, v_node) AS o
                     WHERE v_wf #>> ARRAY['nodes', o.edge->>'target', 'type'] = 'slot_entry';
                END IF;
                v_st := jsonb_set(v_st, ARRAY[v_node, 's'], to_jsonb(CASE WHEN v_row.status = 'running' THEN 'running' ELSE 'done' END));
                v_tok := jsonb_set(v_tok, ARRAY[v_node], to_jsonb(v_row.token));
                IF v_row.status = 'completed' THEN
                    FOR v_edge IN SELECT o.edge_id, o.edge FROM charter._out_edges(v_wf, v_node) AS o ORDER BY o.n LOOP
                        IF v_row.output->'chosenEdgeIds' ? v_edge.edge_id THEN
                            v_queue := v_queue || jsonb_build_array(jsonb_build_object('node', v_edge.edge->>'target', 'skip', false,
                                'loop', coalesce((v_edge.edge->>'loop')::boolean, false)));
                        ELSIF NOT coalesce((v_edge.edge->>'loop')::boolean, false) THEN
                            v_queue := v_queue || jsonb_build_array(jsonb_build_object('node', v_edge.edge->>'target', 'skip', true, 'loop', false));
                        END IF;
                    END LOOP;
                    IF v_type = 'end' THEN
                        v_status := 'completed';
                    END IF;
                ELSIF v_row.status = 'failed' THEN
                    v_status := 'failed';
                END IF;
            END IF;
        END IF;
        -- Deliver the queued arrivals (a skip may queue more).
        WHILE jsonb_array_length(v_queue) > 0 LOOP
            v_item := v_queue->0;
            v_queue := v_queue - 0;
            v_node := v_item->>'node';
            v_type := v_wf #>> ARRAY['nodes', v_node, 'type'];
            v_n := v_st->v_node;
            IF (v_item->>'loop')::boolean THEN
                SELECT v_st || jsonb_object_agg(x, (v_st->x) || '{"s": "waiting", "a": 0, "k": 0}') INTO v_st
                  FROM unnest(charter._reachable(v_wf, v_node)) AS x;
                v_st := jsonb_set(v_st, ARRAY[v_node, 's'], '"ready"');
            ELSIF (v_item->>'skip')::boolean AND v_type IN ('start', 'lifecycle_state', 'lifecycle_gate', 'end', 'slot_entry') THEN
                NULL;
            ELSIF v_n->>'s' <> 'waiting' THEN
                NULL;
            ELSIF v_wf #>> ARRAY['joinRequirements', v_node, 'mode'] = 'any' AND NOT (v_item->>'skip')::boolean THEN
                v_st := jsonb_set(v_st, ARRAY[v_node], v_n || '{"s": "ready"}');
            ELSE
                v_n := v_n || jsonb_build_object('a', (v_n->>'a')::integer + 1,
                                                 'k', (v_n->>'k')::integer + CASE WHEN (v_item->>'skip')::boolean THEN 1 ELSE 0 END);
                IF (v_n->>'a')::integer >= (v_n->>'r')::integer THEN
                    IF v_n->>'a' = v_n->>'k' THEN
                        v_n := v_n || '{"s": "done"}';
                        SELECT v_queue || coalesce(jsonb_agg(jsonb_build_object('node', o.edge->>'target', 'skip', true, 'loop', false) ORDER BY o.n), '[]')
                          INTO v_queue FROM charter._out_edges(v_wf, v_node) AS o
                         WHERE NOT coalesce((o.edge->>'loop')::boolean, false);
                    ELSE
                        v_n := v_n || '{"s": "ready"}';
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
            SELECT jsonb_agg(DISTINCT v_tok->>k) FROM jsonb_each(v_st) AS x(k, v)
             WHERE v->>'s' = 'running' AND v_tok ? k), '[]') ELSE '[]' END);
END;
$$;

-- Overwrites an instance's projection with the one derived from evidence (the escape hatch
-- of seed 002 § Projection Model). Returns it. p_org_id as for get_run.
CREATE OR REPLACE FUNCTION charter.rebuild_instance_projection(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org        text := charter._run_org(p_run_id, p_org_id);
    v_projection jsonb := charter.compute_instance_projection(p_run_id, v_org);
BEGIN
    IF v_projection IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH005', MESSAGE = format('Run %L is not a document workflow instance', p_run_id),
            HINT = 'Pass the runId of Document.workflow.';
    END IF;
    UPDATE charter.workflow_instances AS i
       SET current_nodes = ARRAY(SELECT jsonb_array_elements_text(v_projection->'currentNodes')), updated_at = now()
     WHERE i.id = p_run_id AND i.org_id = v_org;
    RETURN v_projection;
END;
$$;

-- The org's rule store (rule nodes): putting a rule adds a version unless the expression and
-- description are the latest version's already.
CREATE OR REPLACE FUNCTION charter.put_rule(p_org_id text, p_rule_id text, p_expression text, p_ast jsonb, p_description text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_latest charter.rules;
BEGIN
    IF p_rule_id IS NULL OR p_rule_id !~ '^[A-Za-z0-9_.:-]{1,200}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH045',
            MESSAGE = format('%L is not a rule id: use 1 to 200 letters, digits, _ . : -', p_rule_id),
            HINT = 'For example credit.within_limit.';
    END IF;
    IF p_expression IS NULL OR length(p_expression) > 500 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH021',
            MESSAGE = format('Rule %s: the expression is %s; the limit is 500 characters', p_rule_id,
                             coalesce(length(p_expression) || ' characters long', 'missing')),
            HINT = 'Store rules with client.rules.put(rule_id, expression), which compiles them.';
    END IF;
    -- As the compiler makes it, and able to be true or false (a rule node takes one of two edges).
    PERFORM charter._check_ast(p_ast, NULL, format('Rule %s', p_rule_id), true);
    PERFORM pg_advisory_xact_lock(charter._lock_key('rule', format('%s:%s', v_org, p_rule_id)));
    SELECT * INTO v_latest FROM charter.rules AS r WHERE r.org_id = v_org AND r.rule_id = p_rule_id
     ORDER BY r.version DESC LIMIT 1;
    IF FOUND AND v_latest.expression = p_expression AND v_latest.description IS NOT DISTINCT FROM p_description THEN
        RETURN charter._rule_json(v_latest) || '{"status": "unchanged"}';
    END IF;
    INSERT INTO charter.rules (org_id, rule_id, version, expression, ast, description)
    VALUES (v_org, p_rule_id, coalesce(v_latest.version, 0) + 1, p_expression, p_ast, p_description)
    RETURNING * INTO v_latest;
    RETURN charter._rule_json(v_latest) || '{"status": "stored"}';
END;
$$;

CREATE OR REPLACE FUNCTION charter.get_rule(p_org_id text, p_rule_id text, p_version integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org  text := charter._acting_org(p_org_id);
    v_rule charter.rules;
BEGIN
    SELECT * INTO v_rule FROM charter.rules AS r
     WHERE r.org_id = v_org AND r.rule_id = p_rule_id AND (p_version IS NULL OR r.version = p_version)
     ORDER BY r.version DESC LIMIT 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH045',
            MESSAGE = format('Rule %L%s is not in the rule store of org %L', p_rule_id,
                             coalesce(' version ' || p_version, ''), v_org),
            HINT = 'Store it with client.rules.put(rule_id, expression, description).';
    END IF;
    RETURN charter._rule_json(v_rule);
END;
$$;

CREATE OR REPLACE FUNCTION charter._rule_json(p_rule charter.rules)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object('ruleId', p_rule.rule_id, 'version', p_rule.version, 'expression', p_rule.expression,
                              'description', p_rule.description, 'createdAt', p_rule.created_at)
$$;

-- Where an instance is, for drawing: its pinned compiled workflow and each node's status
-- (readiness rows: waiting, ready, running, completed, skipped, failed, cancelled).
-- p_org_id as for get_run.
CREATE OR REPLACE FUNCTION charter.instance_position(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_result jsonb;
BEGIN
    SELECT jsonb_build_object(
               'runId', i.id, 'documentId', i.document_id, 'status', i.status, 'versionId', i.version_id,
               'compiled', v.compiled,
               'nodes', coalesce((SELECT jsonb_object_agg(s.step_slug, s.status) FROM charter.step_states AS s
                                   WHERE s.run_id = i.id AND s.org_id = i.org_id), '{}'::jsonb))
      INTO v_result
      FROM charter.workflow_instances AS i JOIN charter.workflow_versions AS v ON v.id = i.version_id
     WHERE i.id = p_run_id AND i.org_id = charter._run_org(p_run_id, p_org_id);
    IF v_result IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH005', MESSAGE = format('Run %L is not a document workflow instance', p_run_id),
            HINT = 'Pass the runId of a document''s workflow (charter status --document ID shows it).';
    END IF;
    RETURN v_result;
END;
$$;
