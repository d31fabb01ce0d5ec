-- How many nodes the engine finished in this transaction (completed, failed, skipped or
-- cancelled: charter._node_evidence counts them), for the worker's own figures: it reads
-- them back in the statement that applied its events or resumed its waits.
-- PL/pgSQL, not SQL: a SQL function with a SET clause is never inlined and was planned on
-- each of its ~15 calls per fast-lane invoice (42 µs a call; docs/architecture.md, Plans).
CREATE OR REPLACE FUNCTION charter._count_nodes_run(p_nodes integer)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    PERFORM set_config('charter.nodes_run',
                       (coalesce(nullif(current_setting('charter.nodes_run', true), ''), '0')::bigint
                        + p_nodes)::text, true);
END;
$$;
