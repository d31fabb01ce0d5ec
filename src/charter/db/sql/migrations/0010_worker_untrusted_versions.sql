-- Workers tell which matching versions they will not serve (their artifact failed WF-07):
-- the functions take one more argument, so the old signatures go.
DROP FUNCTION IF EXISTS charter.register_worker(text, text, integer, text[], integer, jsonb, integer);
DROP FUNCTION IF EXISTS charter.refresh_worker_versions(text, jsonb);
DROP FUNCTION IF EXISTS charter._matching_versions(jsonb);
