-- Before a new version is recorded: its parents (p_parents) must be recorded already
-- (PARENT_VERSION_NOT_FOUND), and its workflow must exist; a missing workflow is created,
-- described by the commit message, unless p_auto_create_parent is false (WORKFLOW_NOT_FOUND).
-- Returns the warnings for create_workflow_version's result (PARENT_WORKFLOW_AUTO_CREATED).
CREATE OR REPLACE FUNCTION charter._version_parents_ready(
    p_version_id text,
    p_workflow_id text,
    p_parents text[],
    p_auto_create_parent boolean,
    p_commit_message text,
    p_owner_id text
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_id       text := p_version_id;
    v_parents  text[] := p_parents;
    v_missing  text;
    v_warnings jsonb := '[]';
BEGIN
    SELECT p INTO v_missing FROM unnest(v_parents) AS p
     WHERE NOT EXISTS (SELECT 1 FROM charter.workflow_versions AS v WHERE v.id = p) LIMIT 1;
    IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH015',
            MESSAGE = format('Parent version %s of version %s not found', v_missing, v_id),
            HINT = 'Record parent versions before the versions made from them.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM charter.workflows AS w WHERE w.slug = p_workflow_id) THEN
        IF NOT p_auto_create_parent THEN
            RAISE EXCEPTION USING ERRCODE = 'CH011',
                MESSAGE = format('Workflow %s not found', p_workflow_id),
                HINT = 'Insert the workflow first (ensure_workflow), or allow auto_create_parent.';
        END IF;
        INSERT INTO charter.workflows (slug, description, owner_id)
        VALUES (p_workflow_id, p_commit_message, p_owner_id);
        v_warnings := v_warnings || charter._registry_warning('PARENT_WORKFLOW_AUTO_CREATED',
            format('Workflow not found for version (workflow_id: %s). Auto-creating with description=%L.',
                   p_workflow_id, p_commit_message), 'WARN');
    END IF;

    RETURN v_warnings;
END;
$$;
