-- The org of a side effect named by its id, for a caller that did not name it (an
-- operator's confirmation); p_org_id when given. A worker always names it: claim_side_effects
-- gave it each row's org, and a statement that names it reads one org's rows (one shard
-- when distributed, § 15 of docs/architecture.md). PL/pgSQL, not SQL: a SQL function with a
-- SET clause is planned again on every call, and every answer of a worker comes through here.
CREATE OR REPLACE FUNCTION charter._effect_org(p_effect_id bigint, p_org_id text)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_org_id IS NOT NULL THEN
        RETURN p_org_id;
    END IF;
    RETURN (SELECT x.org_id FROM charter.side_effects AS x WHERE x.id = p_effect_id LIMIT 1);
END;
$$;
