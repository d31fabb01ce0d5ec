-- Applies claimed events, each in its own subtransaction: applied → completed; an error
-- → failed and retried after base · 2^(attempt−1) seconds (±25 %), or dead_letter once
-- its attempts are spent. p_verified: the workflow versions whose artifacts the worker
-- verified (WF-07); p_refused: {version id: reason} of those it refused. Each event is named
-- by its key, {created_at, id, org_id} as claim_document_events gave it (without org_id, the
-- org is looked up).
CREATE OR REPLACE FUNCTION charter.apply_document_events(
    p_events jsonb, p_verified text[], p_refused jsonb DEFAULT '{}', p_worker_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- A hot path: plans made once per session and reading by key (docs/architecture.md, Plans).
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
    v_ref     jsonb;
    v_created timestamptz;
    v_id      bigint;
    v_org     text;
    v_event   charter.document_events;
    v_applied integer := 0;
    v_failed  integer := 0;
    v_message text;
BEGIN
    FOR v_ref IN SELECT r FROM jsonb_array_elements(p_events) AS r
                  ORDER BY (r->>'id')::bigint LOOP
        v_created := (v_ref->>'created_at')::timestamptz;
        v_id := (v_ref->>'id')::bigint;
        v_org := coalesce(v_ref->>'org_id', (
            SELECT e.org_id FROM charter.document_events AS e WHERE e.created_at = v_created AND e.id = v_id));
        -- By its whole key and nothing else: the session's plan is made on a small outbox, and
        -- with the status in the query it chose the poll index, (org, next_retry_at,
        -- created_at), and read all of the org's open events to find each one.
        SELECT * INTO v_event FROM charter.document_events AS e
         WHERE e.created_at = v_created AND e.id = v_id AND e.org_id = v_org
         FOR UPDATE;
        -- Its lease ended and another worker took it (or already applied it).
        CONTINUE WHEN NOT FOUND OR v_event.status <> 'processing'
                      OR (p_worker_id IS NOT NULL AND v_event.worker_id IS DISTINCT FROM p_worker_id);
        BEGIN
            PERFORM charter._apply_event(v_event, p_verified, p_refused);
            -- Still processing unless _apply_event held it back for a paused instance.
            UPDATE charter.document_events AS e SET status = 'completed', completed_at = now(), error = NULL
             WHERE e.created_at = v_event.created_at AND e.id = v_event.id AND e.org_id = v_event.org_id
               AND e.status = 'processing';
            IF FOUND THEN
                v_applied := v_applied + 1;
            END IF;
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT;
            UPDATE charter.document_events AS e
               SET status = CASE WHEN e.attempts >= e.max_attempts THEN 'dead_letter' ELSE 'failed' END,
                   error = v_message,
                   next_retry_at = now() + make_interval(secs => 0.5 * power(2, greatest(e.attempts - 1, 0))
                                                              * (0.75 + random() * 0.5))
             WHERE e.created_at = v_event.created_at AND e.id = v_event.id AND e.org_id = v_event.org_id;
            v_failed := v_failed + 1;
        END;
    END LOOP;
    RETURN jsonb_build_object('applied', v_applied, 'failed', v_failed);
END;
$$;
