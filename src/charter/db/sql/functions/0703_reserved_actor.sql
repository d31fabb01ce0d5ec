-- An actor outside the org's directory: for the engine only, the reserved system and
-- service:NAME actors (no roles); anyone else is refused, saying why.
CREATE OR REPLACE FUNCTION charter._reserved_actor(p_org_id text, p_actor text)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_actor = 'system' OR p_actor LIKE 'service:_%' THEN
        IF NOT charter._is_engine() THEN
            RAISE EXCEPTION USING ERRCODE = 'CH036',
                MESSAGE = format('Actor %L is reserved for the engine, and %s is not the engine', p_actor, session_user),
                HINT = 'Act as a user of the org''s directory; system and service:NAME are for charter''s worker and the schema''s owner.';
        END IF;
        RETURN jsonb_build_object('id', p_actor, 'roles', '[]'::jsonb, 'reserved', true);
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH036',
        MESSAGE = format('Actor %L is not in the directory of org %L', p_actor, p_org_id),
        HINT = 'Add the user first (client.directory.put_user), or act as system or service:NAME for the engine''s own work.';
END;
$$;
