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
