-- Marks the user's notifications read (all of them when p_ids is NULL); returns the ids
-- that became read. An id that is not the user's is refused (nothing is marked).
CREATE OR REPLACE FUNCTION charter.mark_notifications_read(p_org_id text, p_user_id text, p_ids bigint[] DEFAULT NULL)
RETURNS bigint[]
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org     text := charter._acting_org(p_org_id);
    v_missing bigint;
    v_marked  bigint[];
BEGIN
    IF p_ids IS NOT NULL THEN
        SELECT i INTO v_missing FROM unnest(p_ids) AS i
         WHERE NOT EXISTS (SELECT 1 FROM charter.notifications AS n
                            WHERE n.org_id = v_org AND n.user_id = p_user_id AND n.id = i)
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'CH062',
                MESSAGE = format('No notification %s for user %L', v_missing, p_user_id),
                HINT = 'Use the ids from client.notifications.list(user).';
        END IF;
    END IF;
    WITH marked AS (
        UPDATE charter.notifications AS n SET read_at = now()
         WHERE n.org_id = v_org AND n.user_id = p_user_id AND n.read_at IS NULL
           AND (p_ids IS NULL OR n.id = ANY (p_ids))
        RETURNING n.id
    )
    SELECT coalesce(array_agg(m.id ORDER BY m.id), '{}') INTO v_marked FROM marked AS m;
    RETURN v_marked;
END;
$$;
