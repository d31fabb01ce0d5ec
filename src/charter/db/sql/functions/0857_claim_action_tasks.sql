-- Python actions (@charter.action): an action node whose type the contract does not declare
-- waits as a handler task. Workers with that handler claim it (the claim is the scheduler:
-- due_at is when it may run, then when its lease ends), run it at least once, and hand the
-- field patch back; the engine applies it through mutate() when it resumes the node, under
-- the document's lock and once the instance has seen every change of the document.

-- Claims up to p_limit handler tasks of the given action types, one org at a time, going
-- round the orgs with handler tasks (_claim_in_turn, _claim_action_tasks_of_org).
CREATE OR REPLACE FUNCTION charter.claim_action_tasks(
    p_worker_id text, p_action_types text[], p_limit integer, p_lease_seconds integer)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    RETURN QUERY SELECT * FROM charter._claim_in_turn(NULL::jsonb, 'action_tasks', p_worker_id,
                                                       p_action_types, p_limit, p_lease_seconds);
END;
$$;
