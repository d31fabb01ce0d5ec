-- create_workflow_version's arguments, checked before anything is locked or read: each
-- refusal (CH020) names the argument and what to pass instead. p_version_id is the id the
-- version gets (given or generated).
CREATE OR REPLACE FUNCTION charter._check_version_arguments(
    p_workflow_id text,
    p_version_id text,
    p_dsl jsonb,
    p_commit_message text,
    p_operation text,
    p_on_existing text
)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_id text := p_version_id;
BEGIN
    IF p_workflow_id IS NULL OR btrim(p_workflow_id) = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020', MESSAGE = 'workflow_id is required',
            HINT = 'Pass the id of the workflow this version belongs to.';
    END IF;
    IF btrim(v_id) = '' OR length(v_id) > 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = 'wf_version_id must be a non-empty string of at most 200 characters',
            HINT = 'Pass a version id, or none to have one generated.';
    END IF;
    IF p_dsl IS NULL OR jsonb_typeof(p_dsl) = 'null' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020', MESSAGE = format('Version %s has no dsl', v_id),
            HINT = 'Pass the definition (any JSON) the version records.';
    END IF;
    IF p_commit_message IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020', MESSAGE = format('Version %s has no commit_message', v_id),
            HINT = 'Say what changed in this version.';
    END IF;
    IF p_operation IS NULL OR p_operation NOT IN ('init', 'crossover', 'mutation', 'immigrant') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('operation=%L is not one of init, crossover, mutation, immigrant', p_operation),
            HINT = 'Say how the version was made.';
    END IF;
    IF p_on_existing IS NULL OR p_on_existing NOT IN ('update', 'skip', 'error') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('on_existing=%L is not one of update, skip, error', p_on_existing),
            HINT = 'Choose what happens when the version already exists.';
    END IF;
END;
$$;
