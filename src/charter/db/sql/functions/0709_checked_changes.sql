-- Refuses changes to undeclared fields (when the contract declares fields), values of the
-- wrong type, and, for an action, fields the action may not set. Returns the changes.
CREATE OR REPLACE FUNCTION charter._checked_changes(
    p_contract jsonb, p_changes jsonb, p_allowed jsonb, p_what text)
RETURNS jsonb
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_field record;
    v_type  text;
BEGIN
    IF jsonb_typeof(coalesce(p_changes, '{}'::jsonb)) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH032',
            MESSAGE = format('The changes of %s must be a JSON object of fields, not %s', p_what, jsonb_typeof(p_changes)),
            HINT = 'Pass {"field": value, ...}.';
    END IF;
    FOR v_field IN SELECT e.key, e.value FROM jsonb_each(coalesce(p_changes, '{}'::jsonb)) AS e LOOP
        IF p_allowed IS NOT NULL AND NOT p_allowed ? v_field.key THEN
            RAISE EXCEPTION USING ERRCODE = 'CH032',
                MESSAGE = format('Field %L cannot be set by %s, which may set only %s', v_field.key, p_what, p_allowed),
                HINT = 'Set it with an update, or declare it among the action''s fields in the contract.';
        END IF;
        CONTINUE WHEN p_contract->'fields' IS NULL;
        v_type := p_contract #>> ARRAY['fields', v_field.key];
        IF v_type IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH032',
                MESSAGE = format('Field %L is not declared by the %s contract', v_field.key, p_contract->>'entityType'),
                HINT = format('The declared fields are %s; declare new ones in the contract and publish it.',
                              (SELECT string_agg(k, ', ' ORDER BY k) FROM jsonb_object_keys(p_contract->'fields') AS k));
        END IF;
        IF v_type <> 'any' AND jsonb_typeof(v_field.value) <> 'null' AND jsonb_typeof(v_field.value) <> v_type THEN
            RAISE EXCEPTION USING ERRCODE = 'CH032',
                MESSAGE = format('Field %L must be a %s, not the %s %s', v_field.key, v_type,
                                 jsonb_typeof(v_field.value), left(v_field.value::text, 80)),
                HINT = 'Send a value of the declared type (null clears a field).';
        END IF;
    END LOOP;
    RETURN coalesce(p_changes, '{}'::jsonb);
END;
$$;
