CREATE OR REPLACE FUNCTION charter.count_send_email_task_failures(
    p_send_email_task_id bigint, p_org_id text DEFAULT NULL)
RETURNS integer
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT count(*)::integer FROM charter.send_email_task_failed AS f
     WHERE f.send_email_task_id = p_send_email_task_id
       AND f.org_id = charter._email_task_org(p_send_email_task_id, p_org_id)
$$;
