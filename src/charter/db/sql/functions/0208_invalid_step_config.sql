-- Why a step's config does not fit its type, or NULL when it does. A sleep waits
-- {"seconds": N} or {"until": "{run.remind_at}"}; a wait_event waits for {"key": template,
-- "timeout"?: seconds}; a single step may run {"child": flow slug} as its body; a map has
-- none. Templates name the run input ({run.path}) or a dependency's output ({dep.path}).
CREATE OR REPLACE FUNCTION charter._invalid_step_config(
    p_slug text, p_type text, p_config jsonb, p_deps text[])
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_key      text;
    v_template text;
    v_name     text;
    v_number   numeric;
BEGIN
    IF p_config IS NULL OR jsonb_typeof(p_config) = 'null' THEN
        RETURN CASE WHEN p_type = 'sleep' THEN format('sleep step %L needs a config with seconds or until', p_slug)
                    WHEN p_type = 'wait_event' THEN format('wait_event step %L needs a config with an event key', p_slug) END;
    END IF;
    IF jsonb_typeof(p_config) <> 'object' OR p_type = 'map' THEN
        RETURN format('step %L has a config %s that a %s step does not take', p_slug, p_config, p_type);
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_config) LOOP
        IF NOT (v_key = ANY (CASE p_type WHEN 'sleep' THEN '{seconds,until}'::text[]
                                         WHEN 'wait_event' THEN '{key,timeout}'::text[]
                                         ELSE '{child}'::text[] END)) THEN
            RETURN format('step %L (%s) has an unknown config field %L', p_slug, p_type, v_key);
        END IF;
    END LOOP;
    IF p_type = 'single' THEN
        IF jsonb_typeof(p_config->'child') IS DISTINCT FROM 'string'
           OR (p_config->>'child') !~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$' THEN
            RETURN format('step %L names child flow %s; use a flow slug', p_slug, p_config->'child');
        END IF;
        RETURN NULL;
    END IF;
    IF p_type = 'sleep' THEN
        IF (p_config ? 'seconds') = (p_config ? 'until') THEN
            RETURN format('sleep step %L needs exactly one of seconds and until', p_slug);
        END IF;
        IF p_config ? 'seconds' THEN
            v_number := CASE WHEN jsonb_typeof(p_config->'seconds') = 'number' THEN (p_config->>'seconds')::numeric END;
            IF v_number IS NULL OR v_number <> trunc(v_number) OR v_number NOT BETWEEN 0 AND 31536000 THEN
                RETURN format('sleep step %L: seconds is %s; use a whole number from 0 to 31536000', p_slug, p_config->'seconds');
            END IF;
            RETURN NULL;
        END IF;
        v_template := p_config->>'until';
    ELSE
        v_template := p_config->>'key';
        IF p_config ? 'timeout' THEN
            v_number := CASE WHEN jsonb_typeof(p_config->'timeout') = 'number' THEN (p_config->>'timeout')::numeric END;
            IF v_number IS NULL OR v_number <> trunc(v_number) OR v_number NOT BETWEEN 1 AND 31536000 THEN
                RETURN format('wait_event step %L: timeout is %s; use a whole number of seconds from 1 to 31536000', p_slug, p_config->'timeout');
            END IF;
        END IF;
    END IF;
    IF jsonb_typeof(p_config->CASE WHEN p_type = 'sleep' THEN 'until' ELSE 'key' END) IS DISTINCT FROM 'string'
       OR length(v_template) NOT BETWEEN 1 AND 500 THEN
        RETURN format('%s step %L: %s must be a string of 1 to 500 characters', p_type, p_slug,
                      CASE WHEN p_type = 'sleep' THEN 'until' ELSE 'key' END);
    END IF;
    FOR v_name IN SELECT split_part(btrim(m[1]), '.', 1)
                    FROM regexp_matches(v_template, '\{([^{}]*)\}', 'g') AS m LOOP
        IF v_name <> 'run' AND NOT (v_name = ANY (p_deps)) THEN
            RETURN format('%s step %L: the template %L names %L, which is neither run nor one of its dependencies (%s)',
                          p_type, p_slug, v_template, v_name, coalesce(nullif(array_to_string(p_deps, ', '), ''), 'none'));
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;
