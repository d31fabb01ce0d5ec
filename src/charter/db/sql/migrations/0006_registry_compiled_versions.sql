-- create_workflow_version takes the compiled artifact of a flow-shaped DSL: drop the old
-- signature so the new function file does not add an overload beside it.
DROP FUNCTION IF EXISTS charter.create_workflow_version(
    text, jsonb, text, text, text, text, text[], text, boolean, text);
