-- Figures that mean what they say: a node that waits for a person, an event, a timer or a
-- receiver is not slow work. Its time is reported as a wait, by what it waited for, and
-- never counted in the step latency (health_report, /metrics, `charter doctor`).

-- What a node of this type waits for, or NULL for a node that works (the engine's own
-- nodes, a Python action handler): 'approval' (approvers decide), 'transition' (a lifecycle
-- state rests until someone moves the document on), 'timer', 'event', 'delivery' (a webhook
-- or notification until its receiver confirms it, retries included).
CREATE OR REPLACE FUNCTION charter._wait_kind(p_node_type text)
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT CASE p_node_type
        WHEN 'approval' THEN 'approval'
        WHEN 'lifecycle_state' THEN 'transition'
        WHEN 'wait_timer' THEN 'timer'
        WHEN 'wait_event' THEN 'event'
        WHEN 'webhook_out' THEN 'delivery'
        WHEN 'notification' THEN 'delivery'
    END
$$;
