-- Workers register when they start (and again after a lost connection): returns the
-- versions the worker serves, which it passes to claim_tasks; p_untrusted are versions its
-- code matches but whose artifact it refused (WF-07).
CREATE OR REPLACE FUNCTION charter.register_worker(
    p_worker_id text,
    p_hostname text,
    p_pid integer,
    p_flows text[],
    p_concurrency integer,
    p_shapes jsonb,
    p_lease_seconds integer DEFAULT 30,
    p_untrusted text[] DEFAULT '{}'
)
RETURNS text[]
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    INSERT INTO charter.workers (id, hostname, pid, flows, concurrency, versions, lease_seconds, orgs)
    VALUES (p_worker_id, p_hostname, p_pid, p_flows, p_concurrency,
            charter._matching_versions(p_shapes, p_untrusted), p_lease_seconds,
            charter._served_orgs())
    ON CONFLICT (id) DO UPDATE
       SET last_heartbeat_at = now(), stopped_at = NULL, flows = EXCLUDED.flows,
           concurrency = EXCLUDED.concurrency, versions = EXCLUDED.versions,
           lease_seconds = EXCLUDED.lease_seconds, orgs = EXCLUDED.orgs
    RETURNING versions
$$;
