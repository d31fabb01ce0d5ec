-- Starts a document's instance: a run of the execution core with a readiness row per node,
-- pinned to the workflow version and to the document version of its on_create event.
CREATE OR REPLACE FUNCTION charter._start_instance(
    p_document charter.documents, p_event charter.document_events, p_verified text[], p_refused jsonb)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_version  charter.workflow_versions;
    v_wf       jsonb;
    v_run      text := gen_random_uuid()::text;
    v_instance charter.workflow_instances;
    v_actor    text := p_event.payload->>'actor';
BEGIN
    SELECT * INTO v_version FROM charter.workflow_versions AS v WHERE v.id = charter._instance_version(p_document.org_id, p_document);
    v_wf := charter._verified_workflow(v_version.id, p_verified, p_refused);
    INSERT INTO charter.runs (id, org_id, workflow_slug, version_id, input)
    VALUES (v_run, p_document.org_id, v_version.workflow_slug, v_version.id,
            jsonb_build_object('documentId', p_document.id, 'entityType', p_document.entity_type));
    INSERT INTO charter.workflow_instances (id, org_id, entity_type, document_id, version_id, document_version,
                                            actor, trace_id)
    VALUES (v_run, p_document.org_id, p_document.entity_type, p_document.id, v_version.id, p_event.entity_version,
            CASE WHEN v_actor = 'system' OR v_actor LIKE 'service:%' THEN NULL ELSE v_actor END, p_event.trace_id)
    RETURNING * INTO v_instance;
    INSERT INTO charter.step_states (run_id, step_slug, org_id, required)
    SELECT v_run, n.key, p_document.org_id,
           coalesce((v_wf #>> ARRAY['joinRequirements', n.key, 'requiredTokenCount'])::integer, 1)
      FROM jsonb_each(v_wf->'nodes') AS n;
    PERFORM charter._arrive(v_instance, v_wf, 'sys:start', 't1', false, NULL, false);
    RETURN v_run;
END;
$$;
