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
-- (an unapplied event, a ready node, a due wait, a queued handler task) — and `settled`:
-- nothing more happens without outside input (a person, an event, a resume), so no timer,
-- delivery (in backoff too), handler task or retry is pending either.
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
    v_runnable boolean;
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
                                  'settled', NOT v_pending, 'currentNodes', '[]'::jsonb, 'waitingFor', '[]'::jsonb);
    END IF;
    SELECT v.compiled INTO v_wf FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id;
    -- A paused instance's events wait for its resume, not for the engine.
    v_runnable := v_pending AND v_instance.status <> 'paused' OR v_instance.status = 'running' AND (
           EXISTS (SELECT 1 FROM charter.step_states AS s WHERE s.run_id = v_instance.id AND s.org_id = v_instance.org_id AND s.status = 'ready')
        OR EXISTS (SELECT 1 FROM charter.instance_waits AS w
                    WHERE w.run_id = v_instance.id AND w.org_id = v_instance.org_id AND (w.kind = 'handler' OR w.due_at <= charter._now(v_instance.org_id)))
        -- An effect a worker is sending, or will send now (not one waiting to retry).
        OR EXISTS (SELECT 1 FROM charter.side_effects AS x
                    WHERE x.run_id = v_instance.id AND x.org_id = v_instance.org_id
                      AND (x.status = 'processing' OR (x.status IN ('pending', 'failed') AND x.next_retry_at <= now()))));
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
        'runnable', v_runnable,
        -- A wait for a person or an event (an approval's escalation, an event's timeout
        -- included) is outside input; a timer, a delivery and its retries, a handler task
        -- and a retry are not, nor any effect of the instance still to be sent.
        'settled', NOT v_runnable AND (v_instance.status <> 'running' OR (
               NOT EXISTS (SELECT 1 FROM charter.instance_waits AS w
                            WHERE w.run_id = v_instance.id AND w.org_id = v_instance.org_id
                              AND w.kind IN ('timer', 'delivery', 'handler', 'retry'))
           AND NOT EXISTS (SELECT 1 FROM charter.side_effects AS x
                            WHERE x.run_id = v_instance.id AND x.org_id = v_instance.org_id
                              AND x.status IN ('pending', 'processing', 'failed')))));
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

-- The states of a document's contract (the version it was written under), in order: what
-- documents.wait(until=STATE) may wait for.
CREATE OR REPLACE FUNCTION charter.document_states(p_org_id text, p_document_id text)
RETURNS text[]
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_states text[];
BEGIN
    SELECT ARRAY(SELECT s->>'id' FROM jsonb_array_elements(v.contract->'states') WITH ORDINALITY AS x(s, n) ORDER BY x.n)
      INTO v_states
      FROM charter.documents AS d JOIN charter.workflow_versions AS v ON v.id = d.contract_version_id
     WHERE d.org_id = v_org AND d.id = p_document_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH030',
            MESSAGE = format('Document %L does not exist in org %L', p_document_id, v_org),
            HINT = 'Check the document id and the client''s org.';
    END IF;
    RETURN v_states;
END;
$$;
