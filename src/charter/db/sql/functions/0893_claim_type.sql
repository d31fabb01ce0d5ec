-- What a worker names to claim a row: its type, and a notification's channel with it
-- ('notification:email'), so a worker takes only what it can send. It takes the row's
-- columns, not the row: on Citus a row read from a shard has the shard's row type.
CREATE OR REPLACE FUNCTION charter._claim_type(p_effect_type text, p_request jsonb)
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT CASE WHEN p_effect_type = 'notification'
                THEN 'notification:' || coalesce(p_request->>'channel', 'email')
                ELSE p_effect_type END
$$;
