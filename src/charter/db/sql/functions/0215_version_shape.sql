-- The shape of one flow version as stored, in the format extract_flow_shape() produces;
-- NULL when the version does not exist or is not a flow.
CREATE OR REPLACE FUNCTION charter._version_shape(p_version_id text)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'options', jsonb_build_object(
            'maxAttempts', v.opt_max_attempts, 'baseDelay', v.opt_base_delay,
            'timeout', v.opt_timeout, 'startDelay', v.opt_start_delay) || coalesce(v.opt_limits, '{}'),
        'steps', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                       'slug', s.slug,
                       'stepType', s.step_type,
                       'dependencies', coalesce((
                           SELECT jsonb_agg(d.dep_slug ORDER BY d.dep_slug COLLATE "C")
                             FROM charter.flow_step_deps AS d
                            WHERE d.version_id = s.version_id AND d.step_slug = s.slug), '[]'::jsonb),
                       'options', jsonb_build_object(
                           'maxAttempts', s.opt_max_attempts, 'baseDelay', s.opt_base_delay,
                           'timeout', s.opt_timeout, 'startDelay', s.opt_start_delay)
                           || coalesce(s.opt_limits, '{}'))
                       || CASE WHEN s.config IS NULL THEN '{}'::jsonb
                               ELSE jsonb_build_object('config', s.config) END
                   ORDER BY s.step_index)
              FROM charter.flow_steps AS s
             WHERE s.version_id = v.id), '[]'::jsonb))
      FROM charter.workflow_versions AS v
     WHERE v.id = p_version_id AND v.definition_kind = 'flow'
$$;
