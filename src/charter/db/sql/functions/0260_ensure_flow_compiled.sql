-- Makes sure the database has exactly this flow (seed 000):
--   missing            -> create it                          status 'compiled'
--   same shape         -> nothing to do                      status 'verified'
--   other shape, development -> publish the code's shape as a new version and make it
--                               current; earlier versions and their runs stay intact
--                                                            status 'recompiled'
--   other shape, production  -> change nothing               status 'mismatch'
-- Returns {"status", "differences": [...], "versionId"}. Concurrent callers for one flow
-- are serialised by an advisory lock: one 'compiled', the others 'verified'.
CREATE OR REPLACE FUNCTION charter.ensure_flow_compiled(
    p_flow_slug text,
    p_shape jsonb,
    p_mode text DEFAULT 'production',
    p_compiled jsonb DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_db_shape    jsonb;
    v_differences text[];
    v_version_id  text;
BEGIN
    IF p_mode IS NULL OR p_mode NOT IN ('development', 'production') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH004',
            MESSAGE = format('ensure_flow_compiled mode %L is not known', p_mode),
            HINT = 'Use ''production'' (the default) or ''development''.';
    END IF;
    PERFORM charter._validate_flow_shape(p_flow_slug, p_shape);
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', p_flow_slug));

    v_db_shape := charter._get_flow_shape(p_flow_slug);
    IF v_db_shape IS NULL THEN
        v_version_id := charter._create_flow_from_shape(p_flow_slug, p_shape, p_compiled);
        RETURN jsonb_build_object('status', 'compiled', 'differences', '[]'::jsonb,
                                  'versionId', v_version_id);
    END IF;

    v_differences := charter._compare_flow_shapes(p_shape, v_db_shape);
    SELECT w.current_version_id INTO v_version_id
      FROM charter.workflows AS w WHERE w.slug = p_flow_slug;
    IF cardinality(v_differences) = 0 THEN
        RETURN jsonb_build_object('status', 'verified', 'differences', '[]'::jsonb,
                                  'versionId', v_version_id);
    END IF;
    IF p_mode = 'development' THEN
        v_version_id := charter._create_flow_from_shape(p_flow_slug, p_shape, p_compiled);
        RETURN jsonb_build_object('status', 'recompiled', 'differences', to_jsonb(v_differences),
                                  'versionId', v_version_id);
    END IF;
    RETURN jsonb_build_object('status', 'mismatch', 'differences', to_jsonb(v_differences),
                              'versionId', v_version_id);
END;
$$;
