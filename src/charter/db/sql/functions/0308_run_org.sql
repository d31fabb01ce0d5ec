-- The org of a run named by its id, for a caller that did not name it (an operator's
-- charter cancel, a test); p_org_id when given. A client and a worker always name the org:
-- they have it, and a statement that names it reads one org's rows (one shard when
-- distributed, § 15 of docs/architecture.md).
CREATE OR REPLACE FUNCTION charter._run_org(p_run_id text, p_org_id text)
RETURNS text
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(p_org_id, (SELECT r.org_id FROM charter.runs AS r WHERE r.id = p_run_id))
$$;
