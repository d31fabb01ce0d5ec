-- The claim of queue p_queue took its turn at org p_org: the next claim starts after it.
CREATE OR REPLACE FUNCTION charter._took_turn(p_queue text, p_org text)
RETURNS void
LANGUAGE plpgsql
AS $$  -- PL/pgSQL, no SET clause: called once per org a claim visits
BEGIN
    PERFORM set_config('charter.turn_' || p_queue, p_org, false);
END;
$$;
