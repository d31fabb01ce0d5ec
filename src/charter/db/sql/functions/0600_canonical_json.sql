-- (Scalars inside a container are written in place, without a call: the recursion is per
-- object and array only. PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md,
-- Plans.)
CREATE OR REPLACE FUNCTION charter._canonical_json(p_value jsonb)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN CASE jsonb_typeof(p_value)
        WHEN 'object' THEN '{' || coalesce((
            SELECT string_agg(to_jsonb(e.key)::text || ':' || CASE jsonb_typeof(e.value)
                                  WHEN 'object' THEN charter._canonical_json(e.value)
                                  WHEN 'array' THEN charter._canonical_json(e.value)
                                  WHEN 'number' THEN CASE WHEN e.value::text ~ '^(0|-?[1-9][0-9]{0,14})$' THEN e.value::text
                                                          ELSE charter._canonical_number((e.value #>> '{}')::numeric) END
                                  ELSE e.value::text END, ','
                              ORDER BY e.key COLLATE "C")
              FROM jsonb_each(p_value) AS e), '') || '}'
        WHEN 'array' THEN '[' || coalesce((
            SELECT string_agg(CASE jsonb_typeof(a.value)
                                  WHEN 'object' THEN charter._canonical_json(a.value)
                                  WHEN 'array' THEN charter._canonical_json(a.value)
                                  WHEN 'number' THEN CASE WHEN a.value::text ~ '^(0|-?[1-9][0-9]{0,14})$' THEN a.value::text
                                                          ELSE charter._canonical_number((a.value #>> '{}')::numeric) END
                                  ELSE a.value::text END, ',' ORDER BY a.n)
              FROM jsonb_array_elements(p_value) WITH ORDINALITY AS a(value, n)), '') || ']'
        WHEN 'number' THEN charter._canonical_number((p_value #>> '{}')::numeric)
        ELSE p_value::text
    END;
END;
$$;
