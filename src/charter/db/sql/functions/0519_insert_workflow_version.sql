-- Records a new version p_version_id of a workflow that exists, with its parents in the
-- order given (p_parent_version_ids; p_parents: the same, distinct). A DSL that is a flow
-- shape is validated and stored as runnable flow steps, with its compiled artifact and its
-- options, and the first runnable version becomes the workflow's current one. Returns
-- create_workflow_version's result with p_warnings.
CREATE OR REPLACE FUNCTION charter._insert_workflow_version(
    p_version_id text,
    p_workflow_id text,
    p_dsl jsonb,
    p_commit_message text,
    p_operation text,
    p_generation_id text,
    p_parent_version_ids text[],
    p_parents text[],
    p_owner_id text,
    p_compiled jsonb,
    p_warnings jsonb
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_id       text := p_version_id;
    v_parents  text[] := p_parents;
    v_number   integer;
    v_is_flow  boolean;
    v_warnings jsonb := p_warnings;
BEGIN
    v_is_flow := jsonb_typeof(p_dsl) = 'object' AND jsonb_typeof(p_dsl->'steps') = 'array'
                 AND jsonb_array_length(p_dsl->'steps') > 0
                 AND jsonb_typeof(p_dsl->'steps'->0->'stepType') = 'string';
    IF v_is_flow THEN
        PERFORM charter._validate_flow_shape(p_workflow_id, p_dsl);
    END IF;
    SELECT coalesce(max(v.version), 0) + 1 INTO v_number
      FROM charter.workflow_versions AS v WHERE v.workflow_slug = p_workflow_id;
    INSERT INTO charter.workflow_versions (
        id, workflow_slug, version, definition_kind, shape, dsl, commit_message, operation,
        generation_id, owner_id, compiled, compiled_hash, compiler_version,
        opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay, opt_limits)
    VALUES (
        v_id, p_workflow_id, v_number, CASE WHEN v_is_flow THEN 'flow' ELSE 'external' END,
        CASE WHEN v_is_flow THEN p_dsl END, p_dsl, p_commit_message, p_operation,
        p_generation_id, p_owner_id,
        CASE WHEN v_is_flow THEN p_compiled END,
        CASE WHEN v_is_flow THEN p_compiled->>'hash' END,
        CASE WHEN v_is_flow THEN p_compiled->>'compilerVersion' END,
        CASE WHEN v_is_flow THEN (p_dsl #>> '{options,maxAttempts}')::numeric::integer END,
        CASE WHEN v_is_flow THEN (p_dsl #>> '{options,baseDelay}')::numeric::integer END,
        CASE WHEN v_is_flow THEN (p_dsl #>> '{options,timeout}')::numeric::integer END,
        CASE WHEN v_is_flow THEN (p_dsl #>> '{options,startDelay}')::numeric::integer END,
        CASE WHEN v_is_flow THEN charter._option_limits(p_dsl->'options') END);
    INSERT INTO charter.workflow_version_parents (version_id, parent_version_id, position)
    SELECT v_id, p, i - 1 FROM unnest(p_parent_version_ids) WITH ORDINALITY AS u(p, i)
     WHERE p = ANY (v_parents)
    ON CONFLICT DO NOTHING;
    IF v_is_flow THEN
        PERFORM charter._insert_flow_steps(v_id, p_dsl);
        -- The first runnable version of a workflow is the one start_run uses by default.
        UPDATE charter.workflows SET current_version_id = v_id, updated_at = now()
         WHERE slug = p_workflow_id AND current_version_id IS NULL;
    END IF;
    RETURN jsonb_build_object('versionId', v_id, 'workflowId', p_workflow_id, 'version', v_number,
                              'action', 'created', 'runnable', v_is_flow, 'warnings', v_warnings);
END;
$$;
