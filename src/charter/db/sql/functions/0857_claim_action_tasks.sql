-- Python actions (@charter.action): an action node whose type the contract does not declare
-- waits as a handler task. Workers with that handler claim it (the claim is the scheduler:
-- due_at is when it may run, then when its lease ends), run it at least once, and hand the
-- field patch back; the engine applies it through mutate() when it resumes the node, under
-- the document's lock and once the instance has seen every change of the document.

CREATE OR REPLACE FUNCTION charter.claim_action_tasks(
    p_worker_id text, p_action_types text[], p_limit integer, p_lease_seconds integer)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org     text;
    v_left    integer := p_limit;
    v_claimed integer;
BEGIN
    -- One org at a time, going round the orgs with handler tasks (_orgs_in_turn).
    FOR v_org IN SELECT o.org FROM charter._orgs_in_turn('action_tasks', NULL, p_limit) AS o(org) LOOP
        EXIT WHEN v_left <= 0;
        RETURN QUERY SELECT * FROM charter._claim_action_tasks_of_org(
            v_org, p_worker_id, p_action_types, v_left, p_lease_seconds);
        GET DIAGNOSTICS v_claimed = ROW_COUNT;
        v_left := v_left - v_claimed;
        PERFORM charter._took_turn('action_tasks', v_org);
    END LOOP;
END;
$$;
