-- The workers charter knows, newest first: whether each is alive (heartbeat within its
-- lease and not stopped), what it serves (flows, versions, orgs: null is every org) and how
-- many tasks it holds now.
CREATE OR REPLACE FUNCTION charter.list_workers(p_include_stopped boolean DEFAULT false)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
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
     WHERE p_include_stopped OR w.stopped_at IS NULL
     ORDER BY w.started_at DESC, w.id
$$;
