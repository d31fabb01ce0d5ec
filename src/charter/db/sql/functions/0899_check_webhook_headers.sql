-- Headers a webhook may carry: printable ASCII, and none of those charter sets itself.
CREATE OR REPLACE FUNCTION charter._check_webhook_headers(p_headers jsonb)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_name  text;
    v_value jsonb;
BEGIN
    IF jsonb_typeof(coalesce(p_headers, '{}'::jsonb)) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060', MESSAGE = 'Webhook headers must be an object of names to values',
            HINT = 'Pass headers={"X-Name": "value"}.';
    END IF;
    FOR v_name, v_value IN SELECT * FROM jsonb_each(coalesce(p_headers, '{}'::jsonb)) LOOP
        IF lower(v_name) IN ('content-type', 'content-length', 'idempotency-key', 'host')
           OR lower(v_name) LIKE 'x-charter-%' THEN
            RAISE EXCEPTION USING ERRCODE = 'CH060',
                MESSAGE = format('Webhook header %s is set by charter', v_name),
                HINT = 'Leave it out: charter sends Content-Type, Idempotency-Key and the X-Charter-* headers itself.';
        END IF;
        IF v_name !~ '^[!#$%&''*+.^_`|~0-9A-Za-z-]+$' OR (v_value #>> '{}') !~ '^[ -~]*$' THEN
            RAISE EXCEPTION USING ERRCODE = 'CH060',
                MESSAGE = format('Webhook header %L: %L is not a valid HTTP header', v_name, v_value #>> '{}'),
                HINT = 'Header names are tokens; values printable ASCII without line breaks.';
        END IF;
    END LOOP;
END;
$$;
