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
