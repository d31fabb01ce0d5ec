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
