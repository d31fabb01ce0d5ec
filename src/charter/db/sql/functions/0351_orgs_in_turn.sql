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
