-- Seed 001 § 1: inserting a workflow is always possible, with its (required) description.
-- An existing one follows
-- p_on_existing: 'update' (description and owner, INFO warning), 'skip' (INFO warning) or
-- 'error' (WORKFLOW_EXISTS). Returns {"workflowId", "action": created|updated|skipped,
-- "warnings": [...]}.
CREATE OR REPLACE FUNCTION charter.ensure_workflow(
    p_wf_id text,
    p_description text,
    p_owner_id text DEFAULT NULL,
    p_on_existing text DEFAULT 'update'
)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    IF p_wf_id IS NULL OR btrim(p_wf_id) = '' OR length(p_wf_id) > 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = 'A workflow id (wf_id) is required: a non-empty string of at most 200 characters',
            HINT = 'Pass the id your system knows the workflow by.';
    END IF;
    -- Seed 001: a workflow's description is required (an update replaces it, never clears it).
    IF p_description IS NULL OR btrim(p_description) = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('A workflow needs a description (wf_id: %s): a non-empty string', p_wf_id),
            HINT = 'Say in a few words what the workflow does, e.g. ensure_workflow("wf_summarize", "Summarise support tickets").';
    END IF;
    IF p_on_existing IS NULL OR p_on_existing NOT IN ('update', 'skip', 'error') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('on_existing=%L is not one of update, skip, error', p_on_existing),
            HINT = 'Choose what happens when the workflow already exists.';
    END IF;
    INSERT INTO charter.workflows (slug, description, owner_id)
    VALUES (p_wf_id, p_description, p_owner_id)
    ON CONFLICT (slug) DO NOTHING;
    IF FOUND THEN
        RETURN jsonb_build_object('workflowId', p_wf_id, 'action', 'created', 'warnings', '[]'::jsonb);
    END IF;
    IF p_on_existing = 'error' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH010',
            MESSAGE = format('Workflow already exists (wf_id: %s)', p_wf_id),
            HINT = 'Use on_existing="update" to update it or "skip" to leave it.';
    END IF;
    IF p_on_existing = 'skip' THEN
        RETURN jsonb_build_object('workflowId', p_wf_id, 'action', 'skipped', 'warnings', jsonb_build_array(
            charter._registry_warning('WORKFLOW_EXISTS_SKIPPED',
                format('Workflow already exists (wf_id: %s). Skipping.', p_wf_id), 'INFO')));
    END IF;
    UPDATE charter.workflows
       SET description = p_description, owner_id = coalesce(p_owner_id, owner_id), updated_at = now()
     WHERE slug = p_wf_id;
    RETURN jsonb_build_object('workflowId', p_wf_id, 'action', 'updated', 'warnings', jsonb_build_array(
        charter._registry_warning('WORKFLOW_EXISTS_UPDATED',
            format('Workflow already exists (wf_id: %s). Updating.', p_wf_id), 'INFO')));
END;
$$;
