-- The workers charter knows, newest first: whether each is alive (heartbeat within its
-- lease and not stopped), what it serves (flows, versions, orgs: null is every org) and how
-- many tasks it holds now. A stopped worker is left out, and so is a dead one (its lease
-- lapsed without a clean stop) once p_dead_after_seconds have passed since its last
-- heartbeat (NULL: 900, a quarter of an hour); p_include_stopped lists them all. Nothing
-- is deleted, and a dead worker's claims return through their leases (claim_tasks,
-- claim_document_events, claim_side_effects and claim_action_tasks take them up again).
CREATE OR REPLACE FUNCTION charter.list_workers(p_include_stopped boolean DEFAULT false,
                                                p_dead_after_seconds integer DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_dead_after_seconds < 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = format('dead_after_seconds must be 0 or more, not %s', p_dead_after_seconds),
            HINT = 'Give the seconds a dead worker stays listed after its last heartbeat, e.g. 900.';
    END IF;
    RETURN QUERY
    SELECT jsonb_build_object(
        'id', w.id, 'hostname', w.hostname, 'pid', w.pid, 'flows', to_jsonb(w.flows),
        'versions', to_jsonb(w.versions), 'orgs', to_jsonb(w.orgs), 'concurrency', w.concurrency,
        'claimed', (SELECT count(*) FROM charter.tasks AS t
                     WHERE t.status = 'started' AND t.worker_id = w.id),
        'alive', w.stopped_at IS NULL
                 AND w.last_heartbeat_at > now() - make_interval(secs => w.lease_seconds),
        'startedAt', w.started_at, 'lastHeartbeatAt', w.last_heartbeat_at,
        'stoppedAt', w.stopped_at)
      FROM charter.workers AS w
     WHERE p_include_stopped
        OR (w.stopped_at IS NULL
            AND w.last_heartbeat_at > now() - make_interval(secs => w.lease_seconds)
                                            - make_interval(secs => coalesce(p_dead_after_seconds, 900)))
     ORDER BY w.started_at DESC, w.id;
END;
$$;
