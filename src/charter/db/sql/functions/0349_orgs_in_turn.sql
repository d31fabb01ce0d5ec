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
BEGIN
    IF p_queue = 'tasks' THEN
        RETURN (SELECT min(n.org_id) FROM unnest(p_kinds) AS v(id)
                 CROSS JOIN LATERAL (
                    SELECT t.org_id FROM charter.tasks AS t
                     WHERE t.version_id = v.id AND t.available_at IS NOT NULL
                       AND t.org_id > p_after
                     ORDER BY t.org_id
                     LIMIT 1) AS n);
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

-- The orgs this session's worker serves (charter.serve_orgs, a JSON array its connections set
-- when the worker is given orgs: `charter worker --org`), or NULL for every org.
CREATE OR REPLACE FUNCTION charter._served_orgs()
RETURNS text[]
LANGUAGE sql
STABLE
RETURN (SELECT array_agg(o ORDER BY o)
          FROM jsonb_array_elements_text(
                   nullif(current_setting('charter.serve_orgs', true), '')::jsonb) AS o);

-- The orgs a claim of queue p_queue visits, in turn: from the one after the org this session
-- claimed from last (charter.turn_<queue>, which the claim sets as it goes), round to that
-- one again. At most p_max (the claim's limit: an org visited has work, and usually gives a
-- task at least), but no fewer than 32 (an org may give nothing: its tasks all running, or
-- of kinds this worker does not take) and never more than 100, so a claim among many orgs
-- stays short; the next goes on from where it stopped. A worker given its orgs goes round those without asking
-- which have work (its claim of each asks).
CREATE OR REPLACE FUNCTION charter._orgs_in_turn(p_queue text, p_kinds text[], p_max integer)
RETURNS SETOF text
LANGUAGE plpgsql
STABLE
AS $$  -- no SET clause, as for _next_org_with_work
DECLARE
    v_start   text := coalesce(current_setting('charter.turn_' || p_queue, true), '');
    v_served  text[];
    v_org     text := v_start;
    v_wrapped boolean := v_start = '';  -- from the first org: once round is every org
    v_count   integer := 0;
    v_max     integer := least(greatest(p_max, 32), 100);
BEGIN
    IF current_setting('charter.serve_orgs', true) <> '' THEN  -- the common case reads no JSON
        v_served := charter._served_orgs();
    END IF;
    IF v_served IS NOT NULL THEN
        RETURN QUERY SELECT o FROM unnest(v_served) AS o ORDER BY o <= v_start, o LIMIT v_max;
        RETURN;
    END IF;
    WHILE v_count < v_max LOOP
        v_org := charter._next_org_with_work(p_queue, p_kinds, v_org);
        IF v_org IS NULL THEN
            EXIT WHEN v_wrapped;
            v_wrapped := true;
            v_org := '';
            CONTINUE;
        END IF;
        EXIT WHEN v_wrapped AND v_start <> '' AND v_org > v_start;
        v_count := v_count + 1;
        RETURN NEXT v_org;
        EXIT WHEN v_wrapped AND v_org = v_start;
    END LOOP;
END;
$$;

-- The claim of queue p_queue took its turn at org p_org: the next claim starts after it.
CREATE OR REPLACE FUNCTION charter._took_turn(p_queue text, p_org text)
RETURNS void
LANGUAGE plpgsql
AS $$  -- PL/pgSQL, no SET clause: called once per org a claim visits
BEGIN
    PERFORM set_config('charter.turn_' || p_queue, p_org, false);
END;
$$;
