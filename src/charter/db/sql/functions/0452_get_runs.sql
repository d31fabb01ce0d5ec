-- Several runs at once, as get_run gives each, in the order asked; an unknown id is null.
-- (PL/pgSQL for its kept plan, as get_run.) p_org_id as for get_run.
CREATE OR REPLACE FUNCTION charter.get_runs(p_run_ids text[], p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (SELECT coalesce(jsonb_agg(charter.get_run(u.id, p_org_id) ORDER BY u.position), '[]'::jsonb)
              FROM unnest(p_run_ids) WITH ORDINALITY AS u(id, position));
END;
$$;
