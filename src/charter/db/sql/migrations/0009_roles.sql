-- The least-privilege roles of seed 003. They are cluster-wide, so they are made only if
-- missing (several databases of one server share them); their privileges are per database
-- and come from grants/, applied after every change of the functions.
--   charter_worker  may only EXECUTE the worker's functions
--   charter_app     may only EXECUTE the client's and the registry's functions
-- Neither has any table privilege; the functions they call are SECURITY DEFINER.
DO $$
DECLARE
    v_role text;
BEGIN
    FOREACH v_role IN ARRAY ARRAY['charter_worker', 'charter_app'] LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_roles AS r WHERE r.rolname = v_role);
        BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN', v_role);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'role % does not exist and % may not create roles', v_role, current_user
                USING HINT = format('Ask an administrator to run CREATE ROLE %I NOLOGIN once, then migrate again.', v_role);
        END;
    END LOOP;
END;
$$;
