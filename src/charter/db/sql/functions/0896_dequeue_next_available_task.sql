-- Seed 003's dequeue: the next due row of the queue for this worker (NULL when none), of
-- the given types (all by default).
CREATE OR REPLACE FUNCTION charter.dequeue_next_available_task(
    p_worker_id text, p_lease_seconds integer DEFAULT 60, p_task_types text[] DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT c FROM charter.claim_side_effects(
        p_worker_id,
        coalesce(p_task_types, ARRAY['db_function', 'email', 'sms', 'webhook', 'notification:email',
                                     'notification:sms', 'notification:in_app']),
        1, p_lease_seconds) AS c
$$;
