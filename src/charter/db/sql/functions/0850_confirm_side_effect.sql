-- What the side-effects worker calls once an effect is delivered: the effect is completed
-- with its response, and its node resumes. p_org_id is the effect's org (looked up by id
-- when null).
CREATE OR REPLACE FUNCTION charter.confirm_side_effect(
    p_effect_id bigint, p_response jsonb DEFAULT '{}', p_org_id text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_effect charter.side_effects;
    v_org      text := charter._effect_org(p_effect_id, p_org_id);  -- looked up before the query, not nested in it (Citus)
BEGIN
    SELECT * INTO v_effect FROM charter.side_effects AS x
     WHERE x.id = p_effect_id AND x.org_id = v_org;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    RETURN charter._confirm_effect(v_effect, p_response);
END;
$$;
