-- The instance engine (seed 002 § Runtime Engine): a document's workflow instance is a run of
-- the execution core (runs, step_states, step_executions, step_receipts) whose nodes the
-- engine executes in SQL. Every function of the engine runs under the document's lock (WF-01,
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
        PERFORM charter._count_nodes_run(1);  -- the worker's figures (0942_count_nodes_run.sql)
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
