-- A handler's result, in the engine's lock order (the document's lock, then the task):
-- a patch is applied through mutate() and the node completes in this same transaction
-- when the instance has seen every change of the document (else the result waits on the
-- task for the engine to apply after those changes' events); an error is retried with
-- backoff, or fails the node once permanent or out of attempts. Only the worker holding
-- the task may answer: 'stale' otherwise. p_org_id is the instance's org, as the claim gave
-- it (looked up by id when null).
CREATE OR REPLACE FUNCTION charter.finish_action_task(
    p_run_id text, p_node_id text, p_worker_id text, p_patch jsonb, p_error jsonb,
    p_permanent boolean, p_verified text[], p_refused jsonb DEFAULT '{}', p_max_attempts integer DEFAULT 5,
    p_org_id text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_wait     charter.instance_waits;
    v_instance charter.workflow_instances;
    v_version  integer;
    v_org      text := charter._run_org(p_run_id, p_org_id);  -- looked up before the query, not nested in it (Citus)
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_run_id AND i.org_id = v_org;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_instance.org_id || '/' || v_instance.document_id));
    SELECT * INTO v_wait FROM charter.instance_waits AS w
     WHERE w.run_id = p_run_id AND w.org_id = v_instance.org_id AND w.node_id = p_node_id AND w.kind = 'handler'
       AND w.worker_id = p_worker_id AND w.resume IS NULL
     FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'stale';  -- its lease ended and another worker took it, or the node was withdrawn
    END IF;
    IF p_error IS NOT NULL AND NOT p_permanent AND v_wait.attempts < p_max_attempts THEN
        UPDATE charter.instance_waits AS w
           SET worker_id = NULL, last_error = p_error->>'message',
               due_at = charter._now(v_instance.org_id) + make_interval(secs => least(300, power(2, w.attempts - 1)))
         WHERE w.run_id = p_run_id AND w.org_id = v_instance.org_id AND w.node_id = p_node_id;
        RETURN 'retry';
    END IF;
    PERFORM charter._check_payload(p_patch, 'action result');
    UPDATE charter.instance_waits AS w
       SET resume = CASE WHEN p_error IS NULL THEN jsonb_build_object('patch', coalesce(p_patch, '{}'::jsonb))
                         ELSE jsonb_build_object('error', p_error) END,
           due_at = now()
     WHERE w.run_id = p_run_id AND w.org_id = v_instance.org_id AND w.node_id = p_node_id
    RETURNING * INTO v_wait;
    SELECT d.version INTO v_version FROM charter.documents AS d
     WHERE d.org_id = v_instance.org_id AND d.id = v_instance.document_id;
    IF v_version = v_instance.document_version AND v_instance.status = 'running' THEN
        PERFORM charter._resume_wait(v_wait, p_verified, p_refused);  -- the completion, now
        RETURN CASE WHEN p_error IS NULL THEN 'applied' ELSE 'failed' END;
    END IF;
    PERFORM pg_notify('charter_events', v_instance.org_id);
    RETURN 'recorded';
END;
$$;
