-- Kickoff: enqueues the supervisor for a send_email_task at p_scheduled_at. p_org_id is the
-- task's org (looked up by id when null).
CREATE OR REPLACE FUNCTION charter.kickoff_send_email_task(p_send_email_task_id bigint,
                                                           p_scheduled_at timestamptz DEFAULT now(),
                                                           p_org_id text DEFAULT NULL)
RETURNS bigint
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter.enqueue_task(t.org_id, 'db_function',
               jsonb_build_object('db_function', 'charter.send_email_supervisor', 'send_email_task_id', t.id),
               p_scheduled_at)
      FROM charter.send_email_tasks AS t
     WHERE t.id = p_send_email_task_id
       AND t.org_id = charter._email_task_org(p_send_email_task_id, p_org_id)
$$;
