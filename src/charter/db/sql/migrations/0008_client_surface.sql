-- Listing runs newest first, a page at a time, without a filter on the flow.
CREATE INDEX runs_created_idx ON charter.runs (created_at DESC, id DESC);

-- delete_flow_and_data reports what it deleted: the function file creates the new one.
DROP FUNCTION IF EXISTS charter.delete_flow_and_data(text);
