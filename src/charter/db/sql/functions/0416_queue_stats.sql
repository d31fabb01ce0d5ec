-- The queue per flow version: tasks ready now, scheduled later (retries, start delays),
-- running, the age of the oldest ready task, and how many live workers serve the version.
CREATE OR REPLACE FUNCTION charter.queue_stats()
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'flow', q.workflow_slug, 'versionId', q.version_id, 'version', v.version,
        'ready', q.ready, 'scheduled', q.scheduled, 'running', q.running,
        'oldestReadySeconds', q.oldest_ready_seconds,
        'servingWorkers', (SELECT count(*) FROM charter.workers AS w
                            WHERE q.version_id = ANY (w.versions) AND w.stopped_at IS NULL
                              AND w.last_heartbeat_at > now() - make_interval(secs => w.lease_seconds)))
      FROM (SELECT t.workflow_slug, t.version_id,
                   count(*) FILTER (WHERE t.status = 'queued' AND t.available_at <= now()) AS ready,
                   count(*) FILTER (WHERE t.status = 'queued' AND t.available_at > now()) AS scheduled,
                   count(*) FILTER (WHERE t.status = 'started') AS running,
                   extract(epoch FROM now() - min(t.available_at)
                           FILTER (WHERE t.status = 'queued' AND t.available_at <= now()))::float8
                       AS oldest_ready_seconds
              FROM charter.tasks AS t
             WHERE t.status IN ('queued', 'started')
               AND t.available_at IS NOT NULL  -- the same rows: the claim index's condition
             GROUP BY t.workflow_slug, t.version_id) AS q
      JOIN charter.workflow_versions AS v ON v.id = q.version_id
     ORDER BY q.workflow_slug, v.version
$$;
