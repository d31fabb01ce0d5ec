-- Handlers (seed 003 payload contracts).
CREATE OR REPLACE FUNCTION charter.get_email_payload(p_payload jsonb)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_message charter.email_messages;
BEGIN
    SELECT m.* INTO v_message FROM charter.send_email_tasks AS t
      JOIN charter.email_messages AS m ON m.id = t.email_message_id AND m.org_id = t.org_id
     WHERE t.id = (p_payload->>'send_email_task_id')::bigint
       AND t.org_id = current_setting('charter.org_id', true);
    IF NOT FOUND THEN
        RETURN jsonb_build_object('success', false, 'validation_failure_message',
            format('no email for send_email_task %s', coalesce(p_payload->>'send_email_task_id', '(missing)')));
    END IF;
    IF charter.has_send_email_task_succeeded((p_payload->>'send_email_task_id')::bigint, v_message.org_id) THEN
        RETURN jsonb_build_object('success', false, 'validation_failure_message',
            format('send_email_task %s was sent already', p_payload->>'send_email_task_id'));
    END IF;
    RETURN jsonb_build_object('success', true, 'payload', jsonb_build_object(
        'to', v_message.recipient, 'subject', v_message.subject, 'body', v_message.body,
        'idempotency_key', 'send_email_task:' || (p_payload->>'send_email_task_id')));
END;
$$;
