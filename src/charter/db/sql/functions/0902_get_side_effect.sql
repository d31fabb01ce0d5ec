-- One effect of the org (the org's own only).
CREATE OR REPLACE FUNCTION charter.get_side_effect(p_org_id text, p_id bigint)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter._side_effect_json(ROW(x.*)::charter.side_effects) FROM charter.side_effects AS x
     WHERE x.org_id = charter._acting_org(p_org_id) AND x.id = p_id
$$;
