-- A send's facts, for the app: where it stands and every attempt.
CREATE OR REPLACE FUNCTION charter.send_email_status(p_org_id text, p_send_email_task_id bigint)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'id', t.id, 'to', m.recipient, 'subject', m.subject, 'maxAttempts', t.max_attempts,
        'state', CASE WHEN s.send_email_task_id IS NOT NULL THEN 'succeeded'
                      WHEN (SELECT count(*) FROM charter.send_email_task_failed AS f
                             WHERE f.send_email_task_id = t.id AND f.org_id = t.org_id) >= t.max_attempts THEN 'failed'
                      WHEN now() >= t.give_up_at THEN 'gave_up'
                      ELSE 'sending' END,
        'scheduled', (SELECT coalesce(jsonb_agg(jsonb_build_object('attempt', f.attempt, 'taskId', f.task_id,
                                                                   'at', f.created_at) ORDER BY f.attempt), '[]')
                        FROM charter.send_email_task_scheduled AS f WHERE f.send_email_task_id = t.id AND f.org_id = t.org_id),
        'failures', (SELECT coalesce(jsonb_agg(jsonb_build_object('attempt', f.attempt, 'error', f.error,
                                                                  'at', f.created_at) ORDER BY f.attempt), '[]')
                       FROM charter.send_email_task_failed AS f WHERE f.send_email_task_id = t.id AND f.org_id = t.org_id),
        'succeeded', CASE WHEN s.send_email_task_id IS NOT NULL THEN
                         jsonb_build_object('attempt', s.attempt, 'at', s.created_at, 'response', s.provider_response) END)
      FROM charter.send_email_tasks AS t
      JOIN charter.email_messages AS m ON m.id = t.email_message_id AND m.org_id = t.org_id
      LEFT JOIN charter.send_email_task_succeeded AS s
        ON s.send_email_task_id = t.id AND s.org_id = t.org_id
     WHERE t.org_id = charter._acting_org(p_org_id) AND t.id = p_send_email_task_id
$$;
