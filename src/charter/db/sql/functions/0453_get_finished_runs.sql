-- What a wait reads: each run as get_run gives it once it is finished (completed, failed or
-- cancelled), and only {"id", "status"} while it runs, in the order asked; an unknown id is
-- null. A wait reads its runs on every notice while workers run their steps, so it asks
-- for the whole of a run (its steps, evidence and children) only when it will return it.
CREATE OR REPLACE FUNCTION charter.get_finished_runs(p_run_ids text[], p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN (SELECT coalesce(jsonb_agg(
                       CASE WHEN r.status = 'running' THEN jsonb_build_object('id', r.id, 'status', r.status)
                            WHEN r.id IS NOT NULL THEN charter.get_run(r.id, r.org_id) END
                       ORDER BY u.position), '[]'::jsonb)
              FROM unnest(p_run_ids) WITH ORDINALITY AS u(id, position)
              LEFT JOIN charter.runs AS r ON r.id = u.id AND r.org_id = charter._run_org(u.id, p_org_id));
END;
$$;
