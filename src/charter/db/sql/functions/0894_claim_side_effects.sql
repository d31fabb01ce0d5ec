-- Claims up to p_limit due rows of the given types, one org at a time (_claim_in_turn): it
-- goes round the orgs with open rows (_orgs_in_turn) and takes what it can from each
-- (_claim_side_effects_of_org).
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
BEGIN
    RETURN QUERY SELECT * FROM charter._claim_in_turn(NULL::jsonb, 'side_effects', p_worker_id,
                                                       p_effect_types, p_limit, p_lease_seconds);
END;
$$;
