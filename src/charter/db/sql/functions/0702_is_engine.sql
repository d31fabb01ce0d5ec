-- Whether the session is the engine: the schema's owner or a member of charter_worker.
-- Only the engine may act as the reserved actors or record a change as the workflow's.
CREATE OR REPLACE FUNCTION charter._is_engine()
RETURNS boolean
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (SELECT pg_has_role(session_user, n.nspowner, 'MEMBER')
                   OR pg_has_role(session_user, 'charter_worker', 'MEMBER')
              FROM pg_catalog.pg_namespace AS n
             WHERE n.nspname = 'charter');
END;
$$;
