-- Looks again for versions the worker's code matches (a version published later with a
-- shape the code has, e.g. a rollback); returns them and records them if they changed.
CREATE OR REPLACE FUNCTION charter.refresh_worker_versions(
    p_worker_id text,
    p_shapes jsonb,
    p_untrusted text[] DEFAULT '{}'
)
RETURNS text[]
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_versions text[] := charter._matching_versions(p_shapes, p_untrusted);
BEGIN
    UPDATE charter.workers SET versions = v_versions
     WHERE id = p_worker_id AND versions IS DISTINCT FROM v_versions;
    RETURN v_versions;
END;
$$;
