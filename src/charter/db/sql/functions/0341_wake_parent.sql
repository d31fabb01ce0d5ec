-- A child run that was the body of its parent's step has finished (completed, failed or
-- cancelled): the parent's parked task becomes claimable, and its worker completes the step
-- with the child's output or fails it with the child's error. Only the task row is touched,
-- never the parent's run lock, so a child never waits for its parent.
CREATE OR REPLACE FUNCTION charter._wake_parent(p_child charter.runs)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF p_child.parent_run_id IS NULL OR p_child.child_key IS DISTINCT FROM '$body' THEN
        RETURN;
    END IF;
    UPDATE charter.tasks AS t SET available_at = now()
     WHERE t.run_id = p_child.parent_run_id AND t.step_slug = p_child.parent_step
       AND t.task_index = p_child.parent_task_index AND t.org_id = p_child.org_id
       AND t.status = 'queued';
    IF FOUND THEN
        PERFORM pg_notify('charter_tasks', (SELECT r.workflow_slug FROM charter.runs AS r
                                             WHERE r.id = p_child.parent_run_id
                                               AND r.org_id = p_child.org_id));
    END IF;
END;
$$;
