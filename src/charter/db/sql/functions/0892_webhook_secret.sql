-- Delivering the side-effects outbox, which is also seed 003's task queue (WF-10, WF-11):
-- rows are claimed like events (SKIP LOCKED, processing with a lease, fenced by the worker
-- id) and answered once. An effect delivered → completed and its node resumes; a failure →
-- retried with backoff (at least the receiver's Retry-After) or, out of attempts or refused
-- for good, dead_letter — and the node follows its `failed` edge or fails the instance
-- (DELIVERY_FAILED). A task is run once and completed whatever happened: its supervisor
-- decides from the facts its handlers recorded.

-- An org's webhook secret (HMAC-SHA256 key of the signature header), made on first use.
CREATE OR REPLACE FUNCTION charter.webhook_secret(p_org_id text)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_secret text;
BEGIN
    INSERT INTO charter.org_secrets (org_id, webhook_secret)
    VALUES (v_org, encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text
                                            || clock_timestamp()::text, 'UTF8')), 'hex'))
    ON CONFLICT (org_id) DO NOTHING;
    SELECT s.webhook_secret INTO v_secret FROM charter.org_secrets AS s WHERE s.org_id = v_org;
    RETURN v_secret;
END;
$$;
