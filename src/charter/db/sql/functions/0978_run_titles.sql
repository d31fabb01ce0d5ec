-- The runs among p_run_ids that are document workflow instances of the org, each named by
-- its document: {runId: {"documentId", "entityType", "title"}}.
CREATE OR REPLACE FUNCTION charter.run_titles(p_org_id text, p_run_ids text[])
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT coalesce(jsonb_object_agg(i.id, jsonb_build_object('documentId', d.id, 'entityType', d.entity_type,
                                                               'title', charter._shown_title(ROW(d.*)::charter.documents))), '{}')
      FROM charter.workflow_instances AS i
      JOIN charter.documents AS d ON d.org_id = i.org_id AND d.id = i.document_id
     WHERE i.org_id = charter._acting_org(p_org_id) AND i.id = ANY (p_run_ids)
$$;
