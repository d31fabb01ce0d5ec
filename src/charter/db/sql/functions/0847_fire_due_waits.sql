-- Waits resume: timers when their time comes, events when one arrives (or their
-- timeout passes), deliveries when the side-effects worker confirms them. This claim
-- is the scheduler: a wait's due_at is when it may resume, indexed, taken with SKIP LOCKED.

-- Resumes up to p_limit due waits, each in its own subtransaction. Locks are taken in the
-- engine's one order — the document's lock, then the document row, then its waits — and a
-- document another transaction holds is left for the next call (try-lock: never waited on).
-- Pollers read the same due rows, so one that finds the first p_limit held by another goes
-- on to those after them: the loop reads as it goes and stops once it has taken p_limit. The
-- read's LIMIT, ten times p_limit, keeps its plan an ordered index scan (planned for every
-- due wait, it could sort them all on every call) and lets a poller pass what nine others hold.
-- A paused instance's waits do not fire: they stay, and fire once it is resumed if due.
CREATE OR REPLACE FUNCTION charter.fire_due_waits(
    p_limit integer, p_verified text[], p_refused jsonb DEFAULT '{}', p_worker_id text DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_candidate record;
    v_wait      charter.instance_waits;
    v_fired     integer := 0;
    v_message   text;
    v_served    text[] := charter._served_orgs();  -- a worker given its orgs fires theirs
    v_taken     integer := 0;
BEGIN
    FOR v_candidate IN SELECT w.run_id, w.node_id, w.org_id, i.org_id || '/' || i.document_id AS doc
                         FROM charter.instance_waits AS w
                         JOIN charter.workflow_instances AS i ON i.id = w.run_id AND i.org_id = w.org_id
                        WHERE w.due_at <= charter._now_at_most() AND w.due_at <= charter._now(w.org_id) AND (w.kind <> 'handler' OR w.resume IS NOT NULL)
                          AND i.status = 'running'
                          AND (v_served IS NULL OR array_position(v_served, w.org_id) IS NOT NULL)
                        ORDER BY w.due_at LIMIT p_limit * 10 LOOP
        EXIT WHEN v_taken >= p_limit;
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(charter._lock_key('document', v_candidate.doc));
        SELECT * INTO v_wait FROM charter.instance_waits AS w
         WHERE w.run_id = v_candidate.run_id AND w.org_id = v_candidate.org_id
           AND w.node_id = v_candidate.node_id AND w.due_at <= charter._now(v_candidate.org_id)
         FOR UPDATE;
        CONTINUE WHEN NOT FOUND;  -- resumed or withdrawn meanwhile
        v_taken := v_taken + 1;
        BEGIN
            PERFORM charter._resume_wait(v_wait, p_verified, p_refused);
            v_fired := v_fired + 1;
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT;
            UPDATE charter.instance_waits AS w
               SET attempts = w.attempts + 1, last_error = v_message, worker_id = p_worker_id,
                   due_at = now() + make_interval(secs => least(300, 0.5 * power(2, w.attempts)))
             WHERE w.run_id = v_wait.run_id AND w.org_id = v_wait.org_id AND w.node_id = v_wait.node_id;
        END;
    END LOOP;
    RETURN v_fired;
END;
$$;
