-- Claims, as claim_side_effects does, due rows of the types in p_effect_types (those the
-- calling worker cannot send) that no running worker serving their org can send either.
-- The caller answers each with finish_side_effect: not to be retried, CHANNEL_NOT_CONFIGURED.
CREATE OR REPLACE FUNCTION charter.claim_unsendable_side_effects(
    p_worker_id text, p_effect_types text[], p_limit integer, p_lease_seconds integer)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
    v_org     text;
    v_types   text[];
    v_left    integer := p_limit;
    v_claimed integer;
BEGIN
    IF cardinality(coalesce(p_effect_types, '{}')) = 0 THEN
        RETURN;
    END IF;
    FOR v_org IN SELECT o.org FROM charter._orgs_in_turn('side_effects', NULL, p_limit) AS o(org) LOOP
        EXIT WHEN v_left <= 0;
        v_types := ARRAY(
            SELECT t FROM unnest(p_effect_types) AS t
             WHERE NOT EXISTS (SELECT 1 FROM charter.workers AS w
                                WHERE w.stopped_at IS NULL
                                  AND w.last_heartbeat_at > now() - make_interval(secs => w.lease_seconds)
                                  AND (w.orgs IS NULL OR v_org = ANY (w.orgs))
                                  AND (w.channels IS NULL OR t = ANY (w.channels))));
        CONTINUE WHEN cardinality(v_types) = 0;
        RETURN QUERY SELECT * FROM charter._claim_side_effects_of_org(
            v_org, p_worker_id, v_types, v_left, p_lease_seconds);
        GET DIAGNOSTICS v_claimed = ROW_COUNT;
        v_left := v_left - v_claimed;
    END LOOP;
END;
$$;
