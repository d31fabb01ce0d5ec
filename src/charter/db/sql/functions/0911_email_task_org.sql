-- Seed 003's email example, as written: a kickoff enqueues the supervisor; the supervisor
-- reads append-only facts, schedules one email attempt at a time (at most max_attempts),
-- enqueues itself again, and stops at the success fact or when out of attempts or time.
-- The handlers record the attempt's outcome as facts; uniqueness makes each at most once.
-- Each reads only rows of the org the worker's call is scoped to (charter.org_id, set by
-- run_function from the task's org): a payload naming another org's id finds nothing.

-- Facts (input). Seed 003 names them by the email task's id; the org (the rest of the
-- task's key) is looked up when not given, and the supervisor gives it.
CREATE OR REPLACE FUNCTION charter._email_task_org(p_send_email_task_id bigint, p_org_id text)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_org_id IS NOT NULL THEN
        RETURN p_org_id;
    END IF;
    RETURN (SELECT t.org_id FROM charter.send_email_tasks AS t WHERE t.id = p_send_email_task_id);
END;
$$;
