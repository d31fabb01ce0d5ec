-- A run of a flow of one plain step keeps no readiness rows (step_states): its step is ready
-- from the start and its run completes with it, so the rows said nothing its status does not
-- (charter._keeps_readiness, charter._step_states_of). The rows such runs have now go, so
-- that every run of such a flow, old or new, is read the same way.
DELETE FROM charter.step_states AS s
 USING charter.runs AS r
 WHERE r.id = s.run_id AND r.org_id = s.org_id
   AND (SELECT count(*) = 1 AND bool_and(f.step_type = 'single' AND f.config IS NULL)
          FROM charter.flow_steps AS f WHERE f.version_id = r.version_id);
