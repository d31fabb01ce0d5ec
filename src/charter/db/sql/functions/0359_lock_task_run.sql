-- The run of task (p_task_id, p_org_id), taken under the run's advisory lock (WF-01), or
-- NULL when there is no such task (a wrong org finds nothing): where _complete_one and
-- _fail_one start. The task row itself is read after the lock, fenced by its caller.
CREATE OR REPLACE FUNCTION charter._lock_task_run(p_task_id bigint, p_org_id text)
RETURNS text
LANGUAGE plpgsql
-- PL/pgSQL keeps its plan for the session (a SQL function, which cannot be inlined here,
-- would plan its query on every call). No SET clause, which would cost every call: its
-- callers run with an empty search path.
AS $$
DECLARE
    v_run_id text;
BEGIN
    SELECT t.run_id INTO v_run_id FROM charter.tasks AS t WHERE t.id = p_task_id AND t.org_id = p_org_id;
    IF FOUND THEN
        PERFORM pg_advisory_xact_lock(charter._lock_key('run', v_run_id));
    END IF;
    RETURN v_run_id;
END;
$$;
