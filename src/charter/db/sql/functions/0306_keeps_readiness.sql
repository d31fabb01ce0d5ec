-- Whether runs of the version keep readiness rows (step_states). A chain of plain steps (one
-- step, or steps one after another: each with at most one dependency and one dependent, so
-- one root and one leaf) does not: each arrival is its node's only one, so a node is ready
-- when it arrives and the run completes when its leaf does, and the rows would only repeat
-- what the evidence says. Writing them was a quarter of a 1-step run's WAL
-- (docs/architecture.md § 6). Every other version keeps them: joins count arrivals, maps
-- count their tasks, sleeps and waits keep their times.
CREATE OR REPLACE FUNCTION charter._keeps_readiness(p_version_id text)
RETURNS boolean
LANGUAGE plpgsql
STABLE
-- Worked out once per version when its steps were written (flow_version_facts); a version
-- without steps keeps them. PL/pgSQL keeps its plan for the session; no SET clause: it runs
-- with its callers' empty search path.
AS $$
BEGIN
    RETURN coalesce((SELECT f.keeps_readiness FROM charter.flow_version_facts AS f
                      WHERE f.version_id = p_version_id), true);
END;
$$;
