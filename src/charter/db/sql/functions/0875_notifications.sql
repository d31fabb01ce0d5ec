-- In-app notifications: a notification effect on channel in_app becomes one row per user,
-- delivered by the worker like any other channel (once per user per effect).

-- p_org_id is the row's org, as the claim gave it (looked up by id when null).
CREATE OR REPLACE FUNCTION charter.deliver_in_app(p_effect_id bigint, p_worker_id text, p_org_id text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._effect_org(p_effect_id, p_org_id);
    v_effect charter.side_effects;
    v_count  integer;
BEGIN
    SELECT * INTO v_effect FROM charter.side_effects AS x
     WHERE x.id = p_effect_id AND x.org_id = v_org AND x.status = 'processing' AND x.worker_id = p_worker_id;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    -- A known user by id; anything else the node named is taken as a user id too.
    INSERT INTO charter.notifications (org_id, user_id, effect_id, run_id, node_id, subject, body)
    SELECT v_effect.org_id, coalesce(r->>'user', r->>'address'), v_effect.id, v_effect.run_id, v_effect.node_id,
           v_effect.request->>'subject', coalesce(v_effect.request->>'body', '')
      FROM jsonb_array_elements(coalesce(v_effect.request->'recipients', '[]'::jsonb)) AS r
     WHERE coalesce(r->>'user', r->>'address', '') <> ''
    ON CONFLICT DO NOTHING;
    SELECT count(*) INTO v_count FROM charter.notifications AS n
     WHERE n.org_id = v_effect.org_id AND n.effect_id = v_effect.id;
    IF v_count = 0 THEN
        RETURN charter.finish_side_effect(p_effect_id, p_worker_id, jsonb_build_object(
            'ok', false, 'retry', false,
            'error', format('no recipient for in-app notification to %L: no such user or nobody has the role',
                            v_effect.request->>'to')), v_org, v_effect.created_at);
    END IF;
    RETURN charter.finish_side_effect(p_effect_id, p_worker_id,
        jsonb_build_object('ok', true, 'response', jsonb_build_object('notified', v_count)), v_org,
        v_effect.created_at);
END;
$$;

CREATE OR REPLACE FUNCTION charter.list_notifications(
    p_org_id text, p_user_id text, p_unread_only boolean DEFAULT false, p_limit integer DEFAULT 100)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object('id', n.id, 'user', n.user_id, 'subject', n.subject, 'body', n.body,
                              'runId', n.run_id, 'node', n.node_id, 'effectId', n.effect_id,
                              'createdAt', n.created_at, 'readAt', n.read_at)
      FROM charter.notifications AS n
     WHERE n.org_id = charter._acting_org(p_org_id) AND n.user_id = p_user_id
       AND (NOT p_unread_only OR n.read_at IS NULL)
     ORDER BY n.created_at DESC, n.id DESC
     LIMIT greatest(1, least(coalesce(p_limit, 100), 1000))
$$;

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
