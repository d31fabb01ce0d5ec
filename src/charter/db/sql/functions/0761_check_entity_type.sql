-- Refuses what cannot be an entity type's name (ARGUMENT_INVALID), before it is looked up.
CREATE OR REPLACE FUNCTION charter._check_entity_type(p_entity_type text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    IF p_entity_type IS NULL OR p_entity_type !~ '^[a-z][a-z0-9_]*$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = format('%L is not an entity type', p_entity_type),
            HINT = 'Entity types are lower-case names of letters, digits and _ (e.g. ap_invoice).';
    END IF;
END;
$$;
