-- What a worker names to claim a row: its type, and a notification's channel with it
-- ('notification:email'), so a worker takes only what it can send.
CREATE OR REPLACE FUNCTION charter._claim_type(p_effect charter.side_effects)
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT CASE WHEN p_effect.effect_type = 'notification'
                THEN 'notification:' || coalesce(p_effect.request->>'channel', 'email')
                ELSE p_effect.effect_type END
$$;
