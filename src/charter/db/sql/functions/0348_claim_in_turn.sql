-- The claim of every queue: up to p_limit rows of queue p_queue ('tasks', 'side_effects',
-- 'document_events' or 'action_tasks') for worker p_worker_id, going round the orgs with
-- work in it (_orgs_in_turn) and taking what it can from each, through the queue's claim of
-- one org, until it has p_limit. p_kinds narrows what the worker takes: the flow versions
-- of 'tasks', the effect types of 'side_effects', the action types of 'action_tasks'.
-- p_row is a NULL of the queue's row type (charter.claimed_task, charter.claimed_event or
-- jsonb), which this returns a set of; PL/pgSQL keeps a compiled copy, and its plans, per
-- row type.
CREATE OR REPLACE FUNCTION charter._claim_in_turn(
    p_row anyelement,
    p_queue text,
    p_worker_id text,
    p_kinds text[],
    p_limit integer,
    p_lease_seconds integer
)
RETURNS SETOF anyelement
LANGUAGE plpgsql
AS $$  -- no SET clause, as for _orgs_in_turn: it runs with its claim's settings
DECLARE
    v_org     text;
    v_left    integer := p_limit;
    v_claimed integer;
BEGIN
    FOR v_org IN SELECT o.org FROM charter._orgs_in_turn(p_queue, p_kinds, p_limit) AS o(org) LOOP
        EXIT WHEN v_left <= 0;
        IF p_queue = 'tasks' THEN
            RETURN QUERY SELECT * FROM charter._claim_tasks_of_org(v_org, p_worker_id, p_kinds, v_left,
                                                                   p_lease_seconds);
        ELSIF p_queue = 'side_effects' THEN
            RETURN QUERY SELECT * FROM charter._claim_side_effects_of_org(v_org, p_worker_id, p_kinds, v_left,
                                                                          p_lease_seconds);
        ELSIF p_queue = 'document_events' THEN
            RETURN QUERY SELECT * FROM charter._claim_document_events_of_org(v_org, p_worker_id, v_left,
                                                                             p_lease_seconds);
        ELSIF p_queue = 'action_tasks' THEN
            RETURN QUERY SELECT * FROM charter._claim_action_tasks_of_org(v_org, p_worker_id, p_kinds, v_left,
                                                                          p_lease_seconds);
        ELSE
            RAISE EXCEPTION 'charter._claim_in_turn: unknown queue %', p_queue;
        END IF;
        GET DIAGNOSTICS v_claimed = ROW_COUNT;
        v_left := v_left - v_claimed;
        PERFORM charter._took_turn(p_queue, v_org);
    END LOOP;
END;
$$;
