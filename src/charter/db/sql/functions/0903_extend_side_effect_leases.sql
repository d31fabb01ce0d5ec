-- Keeps the rows a worker is still sending its own (a slow receiver must not let another
-- worker send them again); returns the ids still held. p_org_ids gives each row's org, as the
-- claim gave it (looked up by id when null).
CREATE OR REPLACE FUNCTION charter.extend_side_effect_leases(
    p_worker_id text, p_ids bigint[], p_lease_seconds integer, p_org_ids text[] DEFAULT NULL)
RETURNS bigint[]
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    WITH held AS (
        UPDATE charter.side_effects AS x SET next_retry_at = now() + make_interval(secs => p_lease_seconds)
          FROM unnest(p_ids, p_org_ids) AS u(id, org_id)
         WHERE x.id = u.id AND x.org_id = charter._effect_org(u.id, u.org_id)
           AND x.status = 'processing' AND x.worker_id = p_worker_id
        RETURNING x.id
    )
    SELECT coalesce(array_agg(h.id ORDER BY h.id), '{}') FROM held AS h
$$;
