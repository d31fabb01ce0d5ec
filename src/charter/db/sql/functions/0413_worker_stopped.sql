CREATE OR REPLACE FUNCTION charter.worker_stopped(p_worker_id text)
RETURNS void
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    UPDATE charter.workers SET stopped_at = now(), last_heartbeat_at = now() WHERE id = p_worker_id
$$;
