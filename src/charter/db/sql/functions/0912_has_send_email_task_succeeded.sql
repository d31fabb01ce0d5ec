CREATE OR REPLACE FUNCTION charter.has_send_email_task_succeeded(
    p_send_email_task_id bigint, p_org_id text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT EXISTS (SELECT 1 FROM charter.send_email_task_succeeded AS f
                    WHERE f.send_email_task_id = p_send_email_task_id
                      AND f.org_id = charter._email_task_org(p_send_email_task_id, p_org_id))
$$;
