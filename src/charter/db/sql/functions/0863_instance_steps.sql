-- The steps of an instance's run: every node execution with its evidence, in order.
-- p_org_id is the instance's org (looked up by id when null), as for get_run.
CREATE OR REPLACE FUNCTION charter.instance_steps(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'node', e.step_slug, 'nodeType', e.node_type, 'token', e.token, 'status', e.status,
               'entityVersion', e.entity_version, 'actor', e.actor, 'idempotencyKey', e.idempotency_key,
               'output', e.output, 'error', e.error, 'chosenEdgeIds', e.output->'chosenEdgeIds',
               'startedAt', e.started_at, 'finishedAt', e.finished_at)
           ORDER BY e.finished_at, e.id), '[]'::jsonb)
      FROM charter.step_executions AS e
     WHERE e.run_id = p_run_id AND e.org_id = charter._run_org(p_run_id, p_org_id)
$$;
