-- The furthest any org's test clock runs ahead: a scan over every org's due rows reads up to
-- now() plus this (an index range), then holds each row to its own org's clock (_now(org)).
CREATE OR REPLACE FUNCTION charter._now_at_most()
RETURNS timestamptz
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT now() + greatest(interval '0', coalesce((SELECT max(c.ahead) FROM charter.test_clock AS c), interval '0'))
    );
END;
$$;
