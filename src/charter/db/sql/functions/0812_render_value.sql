-- A template value as JSON: a template that is exactly one placeholder keeps its value's
-- type ('{entity.grand_total}' stays a number); anything else renders to a string. Only for
-- webhook payloads of effective versions stored when they were text templates (they are
-- expressions now, refused as templates at publish).
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._render_value(p_template jsonb, p_vars jsonb)
RETURNS jsonb
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT CASE
            WHEN jsonb_typeof(p_template) <> 'string' THEN p_template
            WHEN (p_template #>> '{}') ~ '^\{[^{}]*\}$' THEN
                coalesce(p_vars #> string_to_array(btrim(substr(p_template #>> '{}', 2, length(p_template #>> '{}') - 2)), '.'), 'null')
            ELSE to_jsonb(charter._render(p_template #>> '{}', p_vars)) END
    );
END;
$$;
