-- Raises FLOW_SHAPE_INVALID (SQLSTATE CH001) unless p_shape is a well-formed flow shape:
-- {"options": {...}, "steps": [{"slug", "stepType", "dependencies", "options", "config"?}, ...]}
-- with steps in topological order (each dependency is an earlier step).
CREATE OR REPLACE FUNCTION charter._validate_flow_shape(p_flow_slug text, p_shape jsonb)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_step     jsonb;
    v_slug     text;
    v_type     text;
    v_dep      jsonb;
    v_seen     text[] := '{}';
    v_deps     text[];
    v_problem  text;
BEGIN
    IF p_flow_slug IS NULL OR p_flow_slug !~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$'
       OR p_flow_slug IN ('run', 'ctx') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH001',
            MESSAGE = format('%L is not a valid flow slug', p_flow_slug),
            HINT = 'Use letters, digits and _, not starting with a digit, at most 128 characters.';
    END IF;
    IF jsonb_typeof(p_shape) IS DISTINCT FROM 'object'
       OR jsonb_typeof(p_shape->'steps') IS DISTINCT FROM 'array'
       OR jsonb_array_length(p_shape->'steps') = 0 THEN
        v_problem := 'it must be an object with a non-empty "steps" array';
    END IF;
    IF v_problem IS NULL THEN
        v_problem := charter._invalid_flow_options(p_shape->'options', 'the flow options');
    END IF;
    IF v_problem IS NULL THEN
        FOR v_step IN SELECT value FROM jsonb_array_elements(p_shape->'steps') LOOP
            v_slug := v_step->>'slug';
            v_type := v_step->>'stepType';
            IF jsonb_typeof(v_step) IS DISTINCT FROM 'object'
               OR jsonb_typeof(v_step->'slug') IS DISTINCT FROM 'string' THEN
                v_problem := format('step %s has no "slug" string', v_step);
            ELSIF v_slug !~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$' OR v_slug IN ('run', 'ctx') THEN
                v_problem := format('step slug %L is not valid (letters, digits and _, not starting with a digit, not run or ctx)', v_slug);
            ELSIF v_slug = ANY (v_seen) THEN
                v_problem := format('step %L appears twice', v_slug);
            ELSIF v_type IS NULL OR v_type NOT IN ('single', 'map', 'sleep', 'wait_event') THEN
                v_problem := format('step %L has stepType %s; use "single", "map", "sleep" or "wait_event"', v_slug, coalesce(v_step->>'stepType', 'null'));
            ELSIF jsonb_typeof(v_step->'dependencies') IS DISTINCT FROM 'array' THEN
                v_problem := format('step %L has no "dependencies" array', v_slug);
            ELSE
                v_deps := '{}';
                FOR v_dep IN SELECT value FROM jsonb_array_elements(v_step->'dependencies') LOOP
                    IF jsonb_typeof(v_dep) IS DISTINCT FROM 'string' THEN
                        v_problem := format('step %L has a dependency that is not a string: %s', v_slug, v_dep);
                    ELSIF v_dep #>> '{}' = ANY (v_deps) THEN
                        v_problem := format('step %L lists dependency %L twice', v_slug, v_dep #>> '{}');
                    ELSIF NOT (v_dep #>> '{}' = ANY (v_seen)) THEN
                        v_problem := format('step %L depends on %L, which is not an earlier step (steps must be in topological order; unknown steps and cycles are not allowed)', v_slug, v_dep #>> '{}');
                    END IF;
                    EXIT WHEN v_problem IS NOT NULL;
                    v_deps := v_deps || (v_dep #>> '{}');
                END LOOP;
                IF v_problem IS NULL AND v_type = 'map' AND cardinality(v_deps) > 1 THEN
                    v_problem := format('map step %L has %s dependencies; a map has one array source (or none, to map over the run input)', v_slug, cardinality(v_deps));
                END IF;
                IF v_problem IS NULL THEN
                    v_problem := charter._invalid_flow_options(v_step->'options', format('the options of step %L', v_slug));
                END IF;
                IF v_problem IS NULL THEN
                    v_problem := charter._invalid_step_config(v_slug, v_type, v_step->'config', v_deps);
                END IF;
            END IF;
            EXIT WHEN v_problem IS NOT NULL;
            v_seen := v_seen || v_slug;
        END LOOP;
    END IF;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH001',
            MESSAGE = format('The shape of flow %L is invalid: %s', p_flow_slug, v_problem),
            HINT = 'Shapes are made by charter.compiler.flows.extract_flow_shape(); send one it made.';
    END IF;
END;
$$;
