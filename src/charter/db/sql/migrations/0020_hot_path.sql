-- The claim order is computed for every task written and claimed: with immutable operators
-- only (the minutes subtracted in UTC), a SQL-standard body and no SET clause, PostgreSQL
-- inlines it in the index and the claim instead of calling it. Same values as before, so
-- the index stays valid.
CREATE OR REPLACE FUNCTION charter._claim_order(p_available_at timestamptz, p_priority smallint, p_status text)
RETURNS timestamptz
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
RETURN CASE WHEN p_priority > 0 AND p_status = 'queued'
            THEN timezone(interval '0', timezone(interval '0', p_available_at) - p_priority * interval '1 minute')
            ELSE p_available_at END;

-- Readiness rows are updated two or three times each and none of the updated columns is
-- indexed: with room left on each page those updates are HOT (no index entries written).
ALTER TABLE charter.step_states SET (fillfactor = 70);

-- A completed task now leaves the queue (its receipt and evidence row record it): the queue
-- table holds only work still to do, however long the history.
DELETE FROM charter.tasks WHERE status = 'completed';
COMMENT ON TABLE charter.tasks IS
    'The queue: one small row per task not yet completed (a completed task is deleted; its receipt and evidence remain); available_at is when a queued task may run or a started task''s lease ends.';
