-- The waits of the org's instances that are not stuck (p_stuck: the run ids that are), begun
-- at p_before or earlier: waiting_instances' rows.
CREATE OR REPLACE FUNCTION charter._waiting_rows(p_org text, p_before timestamptz, p_stuck text[])
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    WITH live AS (
        SELECT i.id, i.org_id, i.document_id, i.entity_type, i.status, i.updated_at, i.version_id
          FROM charter.workflow_instances AS i
         WHERE i.org_id = p_org AND i.status IN ('running', 'paused') AND NOT i.id = ANY (coalesce(p_stuck, '{}'))
    ), states AS (
        SELECT * FROM charter._lifecycle_states(ARRAY(SELECT DISTINCT i.version_id FROM live AS i))
    ), waits AS (
        SELECT i.id AS run_id, i.document_id, i.entity_type, i.status,
               CASE w.kind WHEN 'handler' THEN 'task' ELSE w.kind END AS kind,
               w.node_id AS node, w.created_at AS since, w.due_at,
               w.detail || jsonb_strip_nulls(jsonb_build_object('eventKey', w.event_key, 'lastError', w.last_error)) AS detail
          FROM live AS i
          JOIN charter.instance_waits AS w ON w.org_id = i.org_id AND w.run_id = i.id
         WHERE i.status = 'running'
        UNION ALL
        SELECT i.id, i.document_id, i.entity_type, i.status, 'transition', s.step_slug,
               coalesce(s.ready_at, i.updated_at), NULL::timestamptz, jsonb_build_object('state', l.state)
          FROM live AS i
          JOIN charter.step_states AS s ON s.org_id = i.org_id AND s.run_id = i.id
          JOIN states AS l ON l.version_id = i.version_id AND l.slug = s.step_slug
         WHERE i.status = 'running' AND s.status = 'running'
           AND NOT EXISTS (SELECT 1 FROM charter.step_states AS b
                            WHERE b.org_id = i.org_id AND b.run_id = i.id AND b.status IN ('ready', 'running')
                              AND NOT EXISTS (SELECT 1 FROM states AS m
                                               WHERE m.version_id = i.version_id AND m.slug = b.step_slug))
        UNION ALL
        SELECT i.id, i.document_id, i.entity_type, i.status, 'operator', NULL, i.updated_at, NULL, '{}'::jsonb
          FROM live AS i WHERE i.status = 'paused'
    )
    SELECT jsonb_build_object('runId', w.run_id, 'documentId', w.document_id, 'entityType', w.entity_type,
                              'status', w.status, 'kind', w.kind, 'node', w.node, 'since', w.since, 'dueAt', w.due_at,
                              'waitingSeconds', greatest(extract(epoch FROM now() - w.since)::float8, 0),
                              'detail', w.detail)
      FROM waits AS w
     WHERE w.since <= p_before
     ORDER BY w.kind, w.since, w.run_id, w.node
$$;
