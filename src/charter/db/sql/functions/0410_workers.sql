-- Workers register when they start and say when they stop; extend_leases heartbeats.
CREATE OR REPLACE FUNCTION charter.register_worker(
    p_worker_id text,
    p_hostname text,
    p_pid integer,
    p_flows text[],
    p_concurrency integer
)
RETURNS void
LANGUAGE sql
SET search_path = ''
AS $$
    INSERT INTO charter.workers (id, hostname, pid, flows, concurrency)
    VALUES (p_worker_id, p_hostname, p_pid, p_flows, p_concurrency)
    ON CONFLICT (id) DO UPDATE
       SET last_heartbeat_at = now(), stopped_at = NULL, flows = EXCLUDED.flows,
           concurrency = EXCLUDED.concurrency
$$;

CREATE OR REPLACE FUNCTION charter.worker_stopped(p_worker_id text)
RETURNS void
LANGUAGE sql
SET search_path = ''
AS $$
    UPDATE charter.workers SET stopped_at = now(), last_heartbeat_at = now() WHERE id = p_worker_id
$$;
