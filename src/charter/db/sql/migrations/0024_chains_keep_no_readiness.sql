-- A run of a chain of plain steps (one step, or steps one after another) keeps no readiness
-- rows (step_states): each arrival is its node's only one, so the rows said nothing its
-- status and evidence do not (charter._keeps_readiness, charter._step_states_of).

-- What told a run its runner reports (seed 001's invocation) from one charter executes was
-- that it had no readiness rows; now a column says so. Every run without readiness rows
-- until now is such a run.
ALTER TABLE charter.runs ADD COLUMN reported boolean NOT NULL DEFAULT false;
UPDATE charter.runs AS r SET reported = true
 WHERE NOT EXISTS (SELECT 1 FROM charter.step_states AS s WHERE s.run_id = r.id AND s.org_id = r.org_id);
COMMENT ON COLUMN charter.runs.reported IS
    'A run its runner reports (create_invocation, update_invocation), not one charter executes.';

-- The rows the chains' runs have now go, so that every run of such a flow, old or new, is
-- read the same way. The chains are found once, not once per row.
WITH chains AS (
    SELECT f.version_id FROM charter.flow_steps AS f
     GROUP BY f.version_id
    HAVING bool_and(f.step_type = 'single' AND f.config IS NULL)
       AND (SELECT count(*) FROM charter.flow_step_deps AS d WHERE d.version_id = f.version_id) = count(*) - 1
       AND NOT EXISTS (SELECT 1 FROM charter.flow_step_deps AS d WHERE d.version_id = f.version_id
                        GROUP BY d.step_slug HAVING count(*) > 1)
       AND NOT EXISTS (SELECT 1 FROM charter.flow_step_deps AS d WHERE d.version_id = f.version_id
                        GROUP BY d.dep_slug HAVING count(*) > 1))
DELETE FROM charter.step_states AS s
 USING charter.runs AS r, chains AS c
 WHERE r.id = s.run_id AND r.org_id = s.org_id AND r.version_id = c.version_id AND NOT r.reported;
