-- client.approvals.define_chain: a new version of the org's chain (unchanged when the stages
-- and the option are the latest version's). Each stage: {"approvers": [...], "decision":
-- "any" | "all"}; each approver one of {"user": ID}, {"role": NAME}, {"rule": EXPR},
-- {"managerOf": "requester"}. p_allow_same_approver (allowSameApprover) lets one person
-- decide several stages of one run of the chain; by default whoever decided a stage is left
-- out of the later ones. Bad input is refused naming the stage and what is wrong with it.
CREATE OR REPLACE FUNCTION charter.define_approval_chain(
    p_org_id text, p_chain_id text, p_stages jsonb, p_allow_same_approver boolean DEFAULT false)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org     text := charter._acting_org(p_org_id);
    v_latest  charter.approval_chains;
    v_stage   jsonb;
    v_n       integer := 0;
    v_problem text;
    v_example text := '{"approvers": [{"role": "manager"}], "decision": "any"}';
BEGIN
    IF p_chain_id IS NULL OR p_chain_id !~ '^[A-Za-z0-9_.:-]{1,200}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH058', MESSAGE = format('%L is not a chain id', p_chain_id),
            HINT = 'Use 1 to 200 letters, digits, _ . : -, e.g. ap-standard.';
    END IF;
    IF jsonb_typeof(p_stages) IS DISTINCT FROM 'array' OR jsonb_array_length(p_stages) = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH058',
            MESSAGE = format('Chain %s needs a list of one or more stages, not %s', p_chain_id, coalesce(p_stages::text, 'null')),
            HINT = format('stages=[%s, ...]', v_example);
    END IF;
    IF p_allow_same_approver IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH058',
            MESSAGE = format('Chain %s: allowSameApprover is true or false, not null', p_chain_id),
            HINT = 'Leave it out (false: whoever decided a stage is left out of the later ones) or pass true.';
    END IF;
    FOR v_stage IN SELECT s FROM jsonb_array_elements(p_stages) AS s LOOP
        v_n := v_n + 1;
        v_problem := CASE
            WHEN jsonb_typeof(v_stage) <> 'object' THEN 'is not an object'
            WHEN EXISTS (SELECT 1 FROM jsonb_object_keys(v_stage) AS k WHERE k NOT IN ('approvers', 'decision')) THEN
                format('has %s, which a stage does not take (it takes approvers and decision)',
                       (SELECT string_agg(quote_literal(k), ', ' ORDER BY k) FROM jsonb_object_keys(v_stage) AS k
                         WHERE k NOT IN ('approvers', 'decision')))
            WHEN jsonb_typeof(v_stage->'approvers') IS DISTINCT FROM 'array' OR jsonb_array_length(v_stage->'approvers') = 0 THEN
                'has no approvers (a non-empty list)'
            WHEN v_stage ? 'decision' AND (jsonb_typeof(v_stage->'decision') <> 'string'
                                           OR v_stage->>'decision' NOT IN ('any', 'all')) THEN
                format('has decision %s, which is neither "any" nor "all"', v_stage->'decision')
            ELSE (SELECT format('has approver %s, which is not one of {"user": ID}, {"role": NAME}, {"rule": EXPR}, '
                                '{"managerOf": "requester"}', a)
                    FROM jsonb_array_elements(v_stage->'approvers') AS a
                   WHERE jsonb_typeof(a) <> 'object'
                      OR (SELECT count(*) FROM jsonb_object_keys(a)) <> 1
                      OR NOT (a ?| ARRAY['user', 'role', 'rule', 'managerOf'])
                      OR ((a ? 'user' OR a ? 'role')
                          AND (jsonb_typeof(coalesce(a->'user', a->'role')) <> 'string'
                               OR coalesce(a->>'user', a->>'role') = ''))
                      OR (a ? 'managerOf' AND a->>'managerOf' IS DISTINCT FROM 'requester')
                   LIMIT 1) END;
        IF v_problem IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH058',
                MESSAGE = format('Stage %s of chain %s %s: %s', v_n, p_chain_id, v_problem, v_stage),
                HINT = format('A stage looks like %s.', v_example);
        END IF;
    END LOOP;
    PERFORM pg_advisory_xact_lock(charter._lock_key('rule', format('chain:%s:%s', v_org, p_chain_id)));
    SELECT * INTO v_latest FROM charter.approval_chains AS c WHERE c.org_id = v_org AND c.chain_id = p_chain_id
     ORDER BY c.version DESC LIMIT 1;
    IF FOUND AND v_latest.stages = p_stages AND v_latest.allow_same_approver = p_allow_same_approver THEN
        RETURN jsonb_build_object('chainId', p_chain_id, 'version', v_latest.version, 'status', 'unchanged',
                                  'allowSameApprover', v_latest.allow_same_approver);
    END IF;
    INSERT INTO charter.approval_chains (org_id, chain_id, version, stages, allow_same_approver)
    VALUES (v_org, p_chain_id, coalesce(v_latest.version, 0) + 1, p_stages, p_allow_same_approver)
    RETURNING * INTO v_latest;
    RETURN jsonb_build_object('chainId', p_chain_id, 'version', v_latest.version, 'status', 'stored',
                              'allowSameApprover', v_latest.allow_same_approver);
END;
$$;
