-- Claims up to p_limit due rows of the given types, one org at a time: it goes round the
-- orgs with open rows (_orgs_in_turn) and takes what it can from each.
CREATE OR REPLACE FUNCTION charter.claim_side_effects(
    p_worker_id text, p_effect_types text[], p_limit integer, p_lease_seconds integer)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- A hot path: plans made once per session and reading by key (docs/architecture.md, Plans),
-- here and in the helpers it calls, which have no SET clause of their own.
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
    v_org     text;
    v_left    integer := p_limit;
    v_claimed integer;
BEGIN
    FOR v_org IN SELECT o.org FROM charter._orgs_in_turn('side_effects', NULL, p_limit) AS o(org) LOOP
        EXIT WHEN v_left <= 0;
        RETURN QUERY SELECT * FROM charter._claim_side_effects_of_org(
            v_org, p_worker_id, p_effect_types, v_left, p_lease_seconds);
        GET DIAGNOSTICS v_claimed = ROW_COUNT;
        v_left := v_left - v_claimed;
        PERFORM charter._took_turn('side_effects', v_org);
    END LOOP;
END;
$$;
