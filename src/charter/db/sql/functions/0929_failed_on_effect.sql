-- A workflow's effect re-driven, by re-driving its dead letter (retry_side_effects) or by
-- retrying its failed instance (retry_run): one effect, one row, one idempotency key. The
-- instance that failed with DELIVERY_FAILED because of it resumes at once with its node
-- waiting for that effect again, so the node completes when the effect is delivered and the
-- instance goes on along its normal edge (or fails again if the effect dead-letters again).
-- Evidence names who re-drove it: the effect's interventions, a $instance 'redrive' row and
-- an instance.redrive audit row. Callers hold the document's lock, then the effect's row.

-- Whether the instance ended failed because of this effect (at its node, not since retried).
CREATE OR REPLACE FUNCTION charter._failed_on_effect(p_instance charter.workflow_instances, p_effect charter.side_effects)
RETURNS boolean
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT p_instance.status = 'failed'
       AND p_instance.error #>> '{delivery,effectId}' = p_effect.id::text
       AND p_instance.error->>'node' = p_effect.node_id
       AND EXISTS (SELECT 1 FROM charter.step_states AS s
                    WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id
                      AND s.step_slug = p_effect.node_id AND s.status = 'failed')
$$;
