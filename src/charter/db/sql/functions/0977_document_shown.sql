-- What the dashboard's document page shows beyond documents.get: the title, the lifecycle of
-- the contract the document follows (states and transitions, for its diagram), and the
-- history as people read it. Each audit row gains the transition's label (the contract's,
-- for a row that moved the document through a gate) and, for a row the workflow wrote when
-- it passed a gate, the approval decisions that pass followed (who, what, their comment).
CREATE OR REPLACE FUNCTION charter.document_shown(p_org_id text, p_document_id text)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'title', charter._shown_title(ROW(d.*)::charter.documents),
        'states', coalesce(v.contract->'states', '[]'),
        'transitions', coalesce(v.contract->'transitions', '[]'),
        'history', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                       'version', a.version, 'action', a.action, 'actor', a.actor, 'runAs', a.run_as,
                       'via', a.via, 'at', a.at, 'reason', a.reason, 'changes', a.changes, 'nodeId', a.node_id,
                       'label', (SELECT t->>'label' FROM jsonb_array_elements(v.contract->'transitions') AS t
                                  WHERE t->>'gate' = a.action AND t->>'from' = a.changes #>> '{$state,from}'
                                    AND t->>'to' = a.changes #>> '{$state,to}' LIMIT 1),
                       'decisions', CASE WHEN a.via = 'workflow' AND a.changes ? '$state' THEN coalesce((
                           SELECT jsonb_agg(jsonb_build_object('actor', x.actor, 'decision', x.decision,
                                                               'comment', x.comment, 'at', x.decided_at)
                                            ORDER BY x.decided_at, x.id)
                             FROM charter.approval_decisions AS x
                            WHERE x.org_id = a.org_id AND x.document_id = a.document_id
                              AND x.entity_version = a.version - 1 AND x.decided_at <= a.at
                              AND x.decision <> 'abstained'), '[]') ELSE '[]' END)
                   ORDER BY a.id)
              FROM charter.document_audit AS a
             WHERE a.org_id = d.org_id AND a.document_id = d.id), '[]'))
      FROM charter.documents AS d
      LEFT JOIN charter.workflow_versions AS v ON v.id = d.contract_version_id
     WHERE d.org_id = charter._acting_org(p_org_id) AND d.id = p_document_id
$$;
