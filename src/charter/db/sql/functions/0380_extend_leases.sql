-- A worker's heartbeat: renews the leases of the tasks it still holds (matched by
-- delivery_token) and its row in charter.workers. Returns the ids it still holds; a task
-- missing from the answer was cancelled or taken over, so its result would be stale.
-- p_org_ids gives each task's org (claim_tasks returns it): a task is read by its whole key.
-- Without it, the orgs are looked up by id.
CREATE OR REPLACE FUNCTION charter.extend_leases(
    p_worker_id text,
    p_task_ids bigint[],
    p_tokens uuid[],
    p_lease_seconds integer DEFAULT 30,
    p_org_ids text[] DEFAULT NULL
)
RETURNS bigint[]
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_held bigint[];
    v_orgs text[] := coalesce(p_org_ids, charter._task_orgs(p_task_ids));
BEGIN
    UPDATE charter.workers SET last_heartbeat_at = now() WHERE id = p_worker_id;
    WITH renewed AS (
        UPDATE charter.tasks AS t
           SET available_at = now() + make_interval(secs => p_lease_seconds)
          FROM unnest(p_task_ids, v_orgs, p_tokens) AS u(id, org_id, token)
         WHERE t.id = u.id AND t.org_id = u.org_id AND t.delivery_token = u.token
           AND t.status = 'started'
        RETURNING t.id)
    SELECT coalesce(array_agg(renewed.id), '{}') INTO v_held FROM renewed;
    RETURN v_held;
END;
$$;
