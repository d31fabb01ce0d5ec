-- What the app calls: the message, its root task and the kickoff, in one transaction.
CREATE OR REPLACE FUNCTION charter.send_email(
    p_org_id text, p_to text, p_subject text, p_body text, p_max_attempts integer DEFAULT 2,
    p_scheduled_at timestamptz DEFAULT now(), p_recheck_after interval DEFAULT '5 seconds')
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org     text := charter._acting_org(p_org_id);
    v_message bigint;
    v_task    bigint;
BEGIN
    IF p_to IS NULL OR p_to !~ '^[^@\s]+@[^@\s]+$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060', MESSAGE = format('%L is not an email address', p_to),
            HINT = 'Pass one address, e.g. "ana@example.com".';
    END IF;
    IF p_max_attempts IS NULL OR p_max_attempts NOT BETWEEN 1 AND 20 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060',
            MESSAGE = format('max_attempts must be between 1 and 20, not %s', p_max_attempts),
            HINT = 'Seed 003''s example allows one retry: max_attempts=2.';
    END IF;
    IF p_recheck_after IS NULL OR p_recheck_after <= interval '0' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060', MESSAGE = 'recheck_after must be a positive interval',
            HINT = 'How long the supervisor waits before it looks at the facts again, e.g. 5 seconds.';
    END IF;
    INSERT INTO charter.email_messages (org_id, recipient, subject, body)
    VALUES (v_org, p_to, coalesce(p_subject, ''), coalesce(p_body, '')) RETURNING id INTO v_message;
    -- Sending gives up a day after it was due (not after it was asked for).
    INSERT INTO charter.send_email_tasks (org_id, email_message_id, max_attempts, recheck_after, give_up_at)
    VALUES (v_org, v_message, p_max_attempts, p_recheck_after, coalesce(p_scheduled_at, now()) + interval '1 day')
    RETURNING id INTO v_task;
    PERFORM charter.kickoff_send_email_task(v_task, p_scheduled_at, v_org);
    RETURN v_task;
END;
$$;
