-- What the org's instances wait for that is not trouble: one row per wait of an instance
-- that is not stuck (stuck_instances, p_stuck_minutes), begun at least p_hours ago. kind:
--   approval    a person decides an approval request;
--   transition  a person moves the document on (it rests at a state, its gates ahead);
--   event       an inbound event (its timeout, if any, not passed);
--   timer       a timer, or an approval's escalation deadline, not yet due;
--   delivery    a side effect being delivered, or in backoff before its next try;
--   task        a Python action (handler task) queued or running within its lease;
--   retry       a node's retry in backoff;
--   operator    the instance is paused: an operator resumes it.
CREATE OR REPLACE FUNCTION charter.waiting_instances(p_org_id text, p_hours numeric DEFAULT 0,
                                                     p_stuck_minutes integer DEFAULT 10)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT w FROM (SELECT charter._acting_org(p_org_id) AS org) AS o,
           charter._waiting_rows(o.org, now() - make_interval(secs => greatest(coalesce(p_hours, 0), 0) * 3600),
                                 ARRAY(SELECT s->>'runId' FROM charter.stuck_instances(o.org, p_stuck_minutes) AS s
                                        WHERE s->>'runId' IS NOT NULL)) AS w
$$;
