-- An approval request as the API returns it, titled by the document at its pinned version.
CREATE OR REPLACE FUNCTION charter._request_json(p_request charter.approval_requests)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'id', p_request.id, 'documentId', p_request.document_id, 'runId', p_request.run_id,
        'node', p_request.node_id, 'status', p_request.status, 'entityVersion', p_request.entity_version,
        'snapshotVersion', p_request.snapshot_version, 'approvers', to_jsonb(p_request.approvers),
        'decision', p_request.decision, 'requester', p_request.requester, 'since', p_request.created_at,
        'closedAt', p_request.closed_at, 'reason', p_request.outcome_reason,
        'voidedVersion', p_request.voided_version, 'delegated', p_request.delegated,
        'escalatedAt', p_request.escalated_at, 'excluded', p_request.excluded,
        'entityType', doc.entity_type, 'title', doc.title,
        'decisions', coalesce((SELECT jsonb_agg(jsonb_build_object(
                         'id', d.id, 'actor', d.actor, 'decision', d.decision, 'entityVersion', d.entity_version,
                         'comment', d.comment, 'decidedAt', d.decided_at, 'appliedAt', d.applied_at,
                         'appliedBy', d.applied_by, 'voidedAt', d.voided_at, 'voidedVersion', d.voided_version)
                         ORDER BY d.id)
                     FROM charter.approval_decisions AS d
                    WHERE d.request_id = p_request.id AND d.org_id = p_request.org_id), '[]'::jsonb))
      FROM (SELECT 1) AS one
      -- The title of the version the approver is shown.
      LEFT JOIN LATERAL (
          SELECT d.entity_type,
                 charter._document_title(v.contract->'display', d.entity_type, d.id,
                                         coalesce(s.state, d.state), coalesce(s.data, d.data)) AS title
            FROM charter.documents AS d
            JOIN charter.workflow_versions AS v ON v.id = d.contract_version_id
            LEFT JOIN charter.document_versions AS s
                   ON s.org_id = d.org_id AND s.document_id = d.id AND s.version = p_request.snapshot_version
           WHERE d.org_id = p_request.org_id AND d.id = p_request.document_id) AS doc ON true
$$;
