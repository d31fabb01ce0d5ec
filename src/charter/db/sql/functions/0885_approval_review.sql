-- What an approver reads before deciding: the document's title and summary fields (its
-- contract's display) at the pinned version, and a field table of every field either version
-- holds: its value at the baseline (the last approved version, p_approved, as get_approval
-- finds it; else the first version) and the value to approve, with whether it changed.
-- Summary fields come first, then the list's columns, then the rest by name.
CREATE OR REPLACE FUNCTION charter._approval_review(
    p_request charter.approval_requests, p_pinned charter.document_versions,
    p_baseline charter.document_versions, p_approved boolean)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'requestId', p_request.id, 'documentId', p_request.document_id, 'entityType', d.entity_type,
        'title', charter._document_title(c.display, d.entity_type, d.id, p_pinned.state, p_pinned.data),
        'state', p_pinned.state, 'version', p_pinned.version,
        'baselineVersion', p_baseline.version, 'baselineDocumentId', p_baseline.document_id,
        'baselineApproved', p_approved,
        'summary', coalesce((SELECT jsonb_agg(jsonb_build_object('field', s.name, 'value', p_pinned.data->s.name)
                                              ORDER BY s.n)
                               FROM jsonb_array_elements_text(c.summary) WITH ORDINALITY AS s(name, n)), '[]'),
        'fields', coalesce((SELECT jsonb_agg(jsonb_build_object(
                                       'field', k.name, 'lastApproved', p_baseline.data->k.name,
                                       'toApprove', p_pinned.data->k.name,
                                       'changed', (p_baseline.data->k.name) IS DISTINCT FROM (p_pinned.data->k.name))
                                   ORDER BY coalesce(s.n, 100 + o.n, 1000), k.name COLLATE "C")
                              FROM jsonb_object_keys(coalesce(p_baseline.data, '{}') || coalesce(p_pinned.data, '{}')) AS k(name)
                              LEFT JOIN jsonb_array_elements_text(c.summary) WITH ORDINALITY AS s(name, n) ON s.name = k.name
                              LEFT JOIN jsonb_array_elements_text(c.columns) WITH ORDINALITY AS o(name, n) ON o.name = k.name),
                           '[]'),
        'data', p_pinned.data)
      FROM charter.documents AS d
      JOIN charter.workflow_versions AS v ON v.id = d.contract_version_id
      CROSS JOIN LATERAL (
          SELECT v.contract->'display' AS display,
                 CASE WHEN jsonb_typeof(v.contract #> '{display,summary}') = 'array'
                      THEN v.contract #> '{display,summary}' ELSE '[]' END AS summary,
                 CASE WHEN jsonb_typeof(v.contract #> '{display,columns}') = 'array'
                      THEN v.contract #> '{display,columns}' ELSE '[]' END AS columns) AS c
     WHERE d.org_id = p_request.org_id AND d.id = p_request.document_id
$$;
