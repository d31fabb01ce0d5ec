-- One org's claim of handler tasks that are due (a paused instance's wait for its resume).
CREATE OR REPLACE FUNCTION charter._claim_action_tasks_of_org(
    p_org text, p_worker_id text, p_action_types text[], p_limit integer, p_lease_seconds integer)
RETURNS SETOF jsonb
LANGUAGE sql
SET search_path = ''
AS $$
    WITH claimed AS (
        SELECT w.run_id, w.node_id, w.org_id FROM charter.instance_waits AS w
         WHERE w.org_id = p_org AND w.kind = 'handler' AND w.resume IS NULL
           AND w.due_at <= charter._now(p_org)
           AND w.detail->>'actionType' = ANY (p_action_types)
           AND EXISTS (SELECT 1 FROM charter.workflow_instances AS i
                        WHERE i.id = w.run_id AND i.org_id = w.org_id AND i.status = 'running')
         ORDER BY w.due_at
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED
    ), taken AS (
        UPDATE charter.instance_waits AS w
           SET worker_id = p_worker_id, attempts = w.attempts + 1,
               due_at = charter._now(p_org) + make_interval(secs => p_lease_seconds)
          FROM claimed AS c WHERE w.run_id = c.run_id AND w.node_id = c.node_id AND w.org_id = c.org_id
        RETURNING w.*
    )
    SELECT jsonb_build_object(
               'runId', t.run_id, 'orgId', t.org_id, 'nodeId', t.node_id, 'token', t.token, 'attempt', t.attempts,
               'actionType', t.detail->>'actionType', 'payload', t.detail->'payload',
               'idempotencyKey', t.detail->>'idempotencyKey', 'documentId', i.document_id,
               'entityVersion', t.entity_version,
               'document', jsonb_build_object('id', v.document_id, 'version', v.version, 'state', v.state,
                                              'data', v.data, 'entityType', i.entity_type))
      FROM taken AS t
      JOIN charter.workflow_instances AS i ON i.id = t.run_id AND i.org_id = t.org_id
      JOIN charter.document_versions AS v
        ON v.org_id = i.org_id AND v.document_id = i.document_id AND v.version = t.entity_version
$$;
