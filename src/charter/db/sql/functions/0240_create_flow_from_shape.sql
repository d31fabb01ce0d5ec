-- Creates the flow (if missing) and a new published version of it from a shape; the new
-- version becomes current. Returns the version id. p_compiled is the CompiledWorkflow
-- (optional: SQL callers without a compiler may leave it out).
CREATE OR REPLACE FUNCTION charter._create_flow_from_shape(
    p_flow_slug text,
    p_shape jsonb,
    p_compiled jsonb DEFAULT NULL
)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_version_id text := 'wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16);
    v_number     integer;
BEGIN
    PERFORM charter._validate_flow_shape(p_flow_slug, p_shape);

    INSERT INTO charter.workflows (slug) VALUES (p_flow_slug) ON CONFLICT (slug) DO NOTHING;
    SELECT coalesce(max(v.version), 0) + 1 INTO v_number
      FROM charter.workflow_versions AS v WHERE v.workflow_slug = p_flow_slug;

    INSERT INTO charter.workflow_versions (
        id, workflow_slug, version, definition_kind, shape, compiled, compiled_hash,
        compiler_version, opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay, opt_limits)
    VALUES (
        v_version_id, p_flow_slug, v_number, 'flow', p_shape, p_compiled,
        p_compiled->>'hash', p_compiled->>'compilerVersion',
        (p_shape #>> '{options,maxAttempts}')::numeric::integer,
        (p_shape #>> '{options,baseDelay}')::numeric::integer,
        (p_shape #>> '{options,timeout}')::numeric::integer,
        (p_shape #>> '{options,startDelay}')::numeric::integer,
        charter._option_limits(p_shape->'options'));

    PERFORM charter._insert_flow_steps(v_version_id, p_shape);

    UPDATE charter.workflows
       SET current_version_id = v_version_id, updated_at = now()
     WHERE slug = p_flow_slug;
    RETURN v_version_id;
END;
$$;
