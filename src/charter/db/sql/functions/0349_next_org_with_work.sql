-- A worker's claims go round the orgs that have work in a queue, one org per statement that
-- locks (docs/architecture.md § 15): an org's backlog is served in turn with every other
-- org's, never ahead of them all, and on Citus, distributed by org, each org's claim runs on
-- the node that holds it.

-- The first org after p_after (by its id) with open work in queue p_queue, or NULL: one
-- probe of an index that leads with the org. p_kinds narrows a queue that has kinds (the
-- flow versions of 'tasks'). A read that locks nothing; on Citus it asks every node, which
-- a read may.
CREATE OR REPLACE FUNCTION charter._next_org_with_work(p_queue text, p_kinds text[], p_after text)
RETURNS text
LANGUAGE plpgsql
STABLE
-- PL/pgSQL keeps each branch's plan for the session (a SQL function would plan all four,
-- partitioned outboxes included, on every call). No SET clause: a claim calls this twice or
-- more, and it runs with its claim's settings (an empty search path; claim_tasks and
-- claim_side_effects also ask for generic plans and no sequential scans).
AS $$
DECLARE
    v_kind  text;
    v_org   text;
    v_first text;
BEGIN
    IF p_queue = 'tasks' THEN
        -- One probe per kind (a worker runs a few flow versions), the least org wins. A
        -- statement per probe, not a lateral join over the kinds: Citus cannot push a
        -- LIMIT inside a lateral join down to its shards.
        FOREACH v_kind IN ARRAY p_kinds LOOP
            SELECT t.org_id INTO v_org FROM charter.tasks AS t
             WHERE t.version_id = v_kind AND t.available_at IS NOT NULL AND t.org_id > p_after
             ORDER BY t.org_id
             LIMIT 1;
            IF FOUND AND (v_first IS NULL OR v_org < v_first) THEN
                v_first := v_org;
            END IF;
        END LOOP;
        RETURN v_first;
    ELSIF p_queue = 'side_effects' THEN
        RETURN (SELECT x.org_id FROM charter.side_effects AS x
                 WHERE x.status IN ('pending', 'processing', 'failed') AND x.org_id > p_after
                 ORDER BY x.org_id
                 LIMIT 1);
    ELSIF p_queue = 'document_events' THEN
        RETURN (SELECT e.org_id FROM charter.document_events AS e
                 WHERE e.status IN ('pending', 'processing', 'failed') AND e.org_id > p_after
                 ORDER BY e.org_id
                 LIMIT 1);
    ELSIF p_queue = 'action_tasks' THEN
        RETURN (SELECT w.org_id FROM charter.instance_waits AS w
                 WHERE w.kind = 'handler' AND w.resume IS NULL AND w.org_id > p_after
                 ORDER BY w.org_id
                 LIMIT 1);
    END IF;
    RAISE EXCEPTION 'charter._next_org_with_work: unknown queue %', p_queue;
END;
$$;
