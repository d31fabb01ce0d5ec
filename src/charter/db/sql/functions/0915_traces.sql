-- What a worker reads back to report traces (the optional OpenTelemetry extra): the trace
-- ids of the events it claimed, and the evidence of the nodes those events ran.

-- p_events: the claim's rows [{"created_at", "id"}, ...].
CREATE OR REPLACE FUNCTION charter.event_traces(p_events jsonb)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object('id', e.id, 'traceId', e.trace_id, 'documentId', e.document_id,
                              'entityType', e.entity_type, 'eventType', e.event_type, 'orgId', e.org_id,
                              'at', clock_timestamp())
      FROM jsonb_array_elements(coalesce(p_events, '[]'::jsonb)) AS c
      JOIN charter.document_events AS e
        ON e.created_at = (c->>'created_at')::timestamptz AND e.id = (c->>'id')::bigint
       AND e.org_id = (c->>'org_id')
$$;

-- Node evidence the instances of these documents wrote since p_since (the work of one
-- engine batch); p_documents: [{"orgId", "documentId"}, ...].
CREATE OR REPLACE FUNCTION charter.trace_nodes(p_documents jsonb, p_since timestamptz)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object('orgId', i.org_id, 'documentId', i.document_id, 'runId', x.run_id,
                              'node', x.step_slug, 'nodeType', x.node_type, 'status', x.status,
                              'startedAt', x.started_at, 'finishedAt', x.finished_at)
      FROM jsonb_array_elements(coalesce(p_documents, '[]'::jsonb)) AS d
      JOIN charter.workflow_instances AS i
        ON i.org_id = d->>'orgId' AND i.document_id = d->>'documentId'
      JOIN charter.step_executions AS x ON x.run_id = i.id AND x.org_id = i.org_id
     WHERE x.finished_at >= p_since AND x.step_slug NOT LIKE '$%'
     ORDER BY x.id
$$;
