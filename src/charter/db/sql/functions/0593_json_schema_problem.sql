-- What is wrong with p_value under the JSON Schema p_schema, NULL when nothing is: the subset
-- charter.compiler.node_schemas exports (type, enum, required, properties,
-- additionalProperties false or a schema, propertyNames, minProperties, maxProperties,
-- items, minItems, minLength, pattern read by ~, oneOf). p_path names the value in the
-- message (e.g. approvers[0].rule). The first problem found, depth first.
CREATE OR REPLACE FUNCTION charter._json_schema_problem(p_value jsonb, p_schema jsonb, p_path text DEFAULT '')
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
PARALLEL SAFE
SET search_path = ''
AS $$
DECLARE
    v_type    text := jsonb_typeof(p_value);
    v_at      text := CASE WHEN p_path = '' THEN 'the configuration' ELSE p_path END;
    v_key     text;
    v_child   jsonb;
    v_problem text;
    v_passing int;
    v_first   text;
    v_selected text;
    v_names   text;
    v_forms   int;
BEGIN
    IF p_schema ? 'type' AND NOT (
           v_type = p_schema->>'type'
           OR (p_schema->>'type' = 'integer' AND v_type = 'number' AND p_value::text ~ '^-?[0-9]+$')) THEN
        RETURN format('%s is %s, not %s %s', v_at, coalesce(v_type, 'missing'),
                      CASE WHEN p_schema->>'type' IN ('object', 'array', 'integer') THEN 'an' ELSE 'a' END,
                      p_schema->>'type');
    END IF;
    IF p_schema ? 'enum' AND NOT p_schema->'enum' @> jsonb_build_array(p_value) THEN
        RETURN format('%s=%s is not one of %s', v_at, p_value::text,
                      (SELECT string_agg(e #>> '{}', ', ') FROM jsonb_array_elements(p_schema->'enum') AS e));
    END IF;
    IF v_type = 'string' THEN
        IF p_schema ? 'minLength' AND length(p_value #>> '{}') < (p_schema->>'minLength')::int THEN
            RETURN format('%s must have at least %s characters', v_at, p_schema->>'minLength');
        END IF;
        IF p_schema ? 'pattern' AND NOT (p_value #>> '{}') ~ (p_schema->>'pattern') THEN
            RETURN format('%s=%s does not match %s', v_at, p_value::text, p_schema->>'pattern');
        END IF;
    ELSIF v_type = 'array' THEN
        IF p_schema ? 'minItems' AND jsonb_array_length(p_value) < (p_schema->>'minItems')::int THEN
            RETURN format('%s needs at least %s item(s)', v_at, p_schema->>'minItems');
        END IF;
        IF p_schema ? 'items' THEN
            FOR v_key, v_child IN SELECT (i.n - 1)::text, i.value FROM jsonb_array_elements(p_value) WITH ORDINALITY AS i(value, n) LOOP
                v_problem := charter._json_schema_problem(v_child, p_schema->'items', format('%s[%s]', p_path, v_key));
                IF v_problem IS NOT NULL THEN
                    RETURN v_problem;
                END IF;
            END LOOP;
        END IF;
    ELSIF v_type = 'object' THEN
        SELECT format('%s is missing', ltrim(p_path || '.' || r, '.')) INTO v_problem
          FROM jsonb_array_elements_text(coalesce(p_schema->'required', '[]')) AS r
         WHERE NOT p_value ? r LIMIT 1;
        IF v_problem IS NOT NULL THEN
            RETURN v_problem;
        END IF;
        IF p_schema ? 'minProperties' AND (SELECT count(*) FROM jsonb_object_keys(p_value)) < (p_schema->>'minProperties')::int
           OR p_schema ? 'maxProperties' AND (SELECT count(*) FROM jsonb_object_keys(p_value)) > (p_schema->>'maxProperties')::int THEN
            RETURN format('%s must have %s to %s setting(s), has %s', v_at, coalesce(p_schema->>'minProperties', '0'),
                          coalesce(p_schema->>'maxProperties', 'any number of'),
                          (SELECT count(*) FROM jsonb_object_keys(p_value)));
        END IF;
        FOR v_key, v_child IN SELECT o.key, o.value FROM jsonb_each(p_value) AS o ORDER BY o.key COLLATE "C" LOOP
            IF p_schema ? 'propertyNames' THEN
                v_problem := charter._json_schema_problem(to_jsonb(v_key), p_schema->'propertyNames',
                                                          format('the name %s in %s', to_jsonb(v_key), v_at));
                IF v_problem IS NOT NULL THEN
                    RETURN v_problem;
                END IF;
            END IF;
            IF (p_schema->'properties') ? v_key THEN
                v_problem := charter._json_schema_problem(v_child, p_schema->'properties'->v_key, ltrim(p_path || '.' || v_key, '.'));
            ELSIF p_schema->'additionalProperties' = 'false'::jsonb THEN
                v_problem := format('unknown setting %s in %s (allowed: %s)', v_key, v_at,
                                    coalesce((SELECT string_agg(k, ', ') FROM jsonb_object_keys(p_schema->'properties') AS k), 'none'));
            ELSIF jsonb_typeof(p_schema->'additionalProperties') = 'object' THEN
                v_problem := charter._json_schema_problem(v_child, p_schema->'additionalProperties', ltrim(p_path || '.' || v_key, '.'));
            END IF;
            IF v_problem IS NOT NULL THEN
                RETURN v_problem;
            END IF;
        END LOOP;
    END IF;
    IF jsonb_typeof(p_schema->'oneOf') = 'array' THEN
        -- Forms that only require one setting each: exactly one of those settings.
        SELECT string_agg(b->'required'->>0, ', ') FILTER (WHERE b - 'required' = '{}' AND jsonb_array_length(b->'required') = 1),
               count(*) INTO v_names, v_forms
          FROM jsonb_array_elements(p_schema->'oneOf') AS b;
        v_passing := 0;
        FOR v_child IN SELECT b.value FROM jsonb_array_elements(p_schema->'oneOf') AS b LOOP
            v_problem := charter._json_schema_problem(p_value, v_child, p_path);
            IF v_problem IS NULL THEN
                v_passing := v_passing + 1;
            ELSE
                v_first := coalesce(v_first, v_problem);
                -- The form a setting of one allowed value selects (an approval's mode) is
                -- the one whose problem to report.
                IF EXISTS (SELECT 1 FROM jsonb_each(coalesce(v_child->'properties', '{}')) AS f
                            WHERE jsonb_array_length(CASE WHEN jsonb_typeof(f.value->'enum') = 'array'
                                                          THEN f.value->'enum' ELSE '[]' END) = 1
                              AND p_value->f.key = f.value->'enum'->0) THEN
                    v_selected := coalesce(v_selected, v_problem);
                END IF;
            END IF;
        END LOOP;
        IF v_passing <> 1 AND v_names IS NOT NULL AND array_length(string_to_array(v_names, ', '), 1) = v_forms THEN
            RETURN format('%s needs exactly one of %s', v_at, v_names);
        ELSIF v_passing = 0 AND v_selected IS NOT NULL THEN
            RETURN v_selected;
        ELSIF v_passing = 0 THEN
            -- No form selected: the setting that selects one (in every form, of one allowed
            -- value each) has none of their values.
            SELECT format('%s=%s is not one of %s', ltrim(p_path || '.' || d.key, '.'), coalesce(p_value->d.key, 'null'),
                          string_agg(d.value #>> '{}', ', ' ORDER BY d.n))
              INTO v_problem
              FROM (SELECT f.key, f.value->'enum'->0 AS value, b.n
                      FROM jsonb_array_elements(p_schema->'oneOf') WITH ORDINALITY AS b(value, n),
                           jsonb_each(coalesce(b.value->'properties', '{}')) AS f
                     WHERE jsonb_typeof(f.value->'enum') = 'array' AND jsonb_array_length(f.value->'enum') = 1) AS d
             GROUP BY d.key HAVING count(*) = v_forms
             ORDER BY d.key COLLATE "C" LIMIT 1;
            RETURN coalesce(v_problem, format('%s matches none of its forms (the first: %s)', v_at, v_first));
        ELSIF v_passing > 1 THEN
            RETURN format('%s matches more than one of its forms', v_at);
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
