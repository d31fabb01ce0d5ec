-- Renders a template's {path} placeholders (e.g. 'delivery:pod:{entity.shipment_id}') from
-- the variables: strings as they are, other values as JSON, a missing path as empty.
CREATE OR REPLACE FUNCTION charter._render(p_template text, p_vars jsonb)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_out   text := '';
    v_rest  text := p_template;
    v_match text[];
    v_value jsonb;
BEGIN
    IF p_template IS NULL THEN
        RETURN NULL;
    END IF;
    LOOP
        v_match := regexp_match(v_rest, '^(.*?)\{([^{}]*)\}(.*)$', 's');
        EXIT WHEN v_match IS NULL;
        v_value := p_vars #> string_to_array(btrim(v_match[2]), '.');
        v_out := v_out || v_match[1] || CASE
            WHEN v_value IS NULL OR jsonb_typeof(v_value) = 'null' THEN ''
            WHEN jsonb_typeof(v_value) = 'string' THEN v_value #>> '{}'
            ELSE v_value::text END;
        v_rest := v_match[3];
    END LOOP;
    RETURN v_out || v_rest;
END;
$$;
