-- The side-effects dead letter queue: list (all, or one run's), show, re-drive (same
-- idempotency key, fresh attempts; a workflow's failed instance resumes at the node), drop
-- (kept as cancelled, with who dropped it). Effects only: a task that ran out is its
-- supervisor's business.

CREATE OR REPLACE FUNCTION charter.list_dead_letters(
    p_org_id text, p_limit integer DEFAULT 100, p_run_id text DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter._side_effect_json(ROW(x.*)::charter.side_effects) FROM charter.side_effects AS x
     WHERE x.org_id = charter._acting_org(p_org_id) AND x.status = 'dead_letter' AND x.kind = 'effect'
       AND (p_run_id IS NULL OR x.run_id = p_run_id)
     ORDER BY x.completed_at DESC, x.id DESC
     LIMIT greatest(1, least(coalesce(p_limit, 100), 10000))
$$;
