-- A run of a chain of plain steps (one step, or steps one after another) keeps no readiness
-- rows (step_states): each arrival is its node's only one, so the rows said nothing its
-- evidence does not (charter._keeps_readiness, charter._step_states_of). The rows such runs
-- have now go, so that every run of such a flow, old or new, is read the same way.
DELETE FROM charter.step_states AS s
 USING charter.runs AS r
 WHERE r.id = s.run_id AND r.org_id = s.org_id
   AND (SELECT bool_and(f.step_type = 'single' AND f.config IS NULL)
               AND (SELECT count(*) FROM charter.flow_step_deps AS d
                     WHERE d.version_id = r.version_id) = count(*) - 1
               AND NOT EXISTS (SELECT 1 FROM charter.flow_step_deps AS d
                                WHERE d.version_id = r.version_id
                                GROUP BY d.step_slug HAVING count(*) > 1)
               AND NOT EXISTS (SELECT 1 FROM charter.flow_step_deps AS d
                                WHERE d.version_id = r.version_id
                                GROUP BY d.dep_slug HAVING count(*) > 1)
          FROM charter.flow_steps AS f WHERE f.version_id = r.version_id);
