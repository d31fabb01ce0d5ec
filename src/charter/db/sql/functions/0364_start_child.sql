-- Starts a child run of a task (idempotent per parent task and key: the child's id is
-- derived from them, so a retried parent finds the child it started before, whatever input
-- it passes this time). The child inherits the parent's org and priority. Returns its id.
CREATE OR REPLACE FUNCTION charter._start_child(p_task charter.tasks, p_flow text, p_input jsonb, p_key text)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_id text := charter._child_run_id(p_task.run_id, p_task.step_slug, p_task.task_index, p_key);
BEGIN
    IF EXISTS (SELECT 1 FROM charter.runs AS r WHERE r.id = v_id AND r.org_id = p_task.org_id) THEN
        RETURN v_id;
    END IF;
    PERFORM charter.start_run(p_flow, coalesce(p_input, 'null'::jsonb), v_id, p_task.org_id, NULL,
        (SELECT r.priority FROM charter.runs AS r WHERE r.id = p_task.run_id AND r.org_id = p_task.org_id),
        jsonb_build_object('runId', p_task.run_id, 'step', p_task.step_slug,
                           'taskIndex', p_task.task_index, 'key', p_key));
    RETURN v_id;
END;
$$;
