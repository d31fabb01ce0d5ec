-- The flow versions a worker's code can run: for each flow slug in p_shapes ({slug: shape,
-- as extract_flow_shape() gives it}), the flow versions whose steps, step types and
-- dependencies equal the code's (options are not compared: they are tuned in place and
-- read from the database at run time), leaving out p_untrusted.
CREATE OR REPLACE FUNCTION charter._matching_versions(p_shapes jsonb, p_untrusted text[] DEFAULT '{}')
RETURNS text[]
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(array_agg(v.id ORDER BY v.id), '{}')
      FROM jsonb_each(p_shapes) AS f(slug, shape)
      JOIN charter.workflow_versions AS v
        ON v.workflow_slug = f.slug AND v.definition_kind = 'flow'
     WHERE v.id <> ALL (coalesce(p_untrusted, '{}'))
       AND cardinality(charter._compare_flow_shapes(f.shape, charter._version_shape(v.id))) = 0
$$;

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

CREATE OR REPLACE FUNCTION charter.worker_stopped(p_worker_id text)
RETURNS void
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    UPDATE charter.workers SET stopped_at = now(), last_heartbeat_at = now() WHERE id = p_worker_id
$$;
