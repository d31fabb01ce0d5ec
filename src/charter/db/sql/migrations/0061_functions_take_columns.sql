-- Two helpers that were handed a whole row take its columns instead: on Citus a row read
-- from a shard has the shard's row type, which no function of the table's type accepts.
-- Their function files create the new signatures in this same transaction (on a new
-- database, after this file: IF EXISTS).
DROP FUNCTION IF EXISTS charter._step_options(charter.flow_steps, charter.workflow_versions);
DROP FUNCTION IF EXISTS charter._claim_type(charter.side_effects);
