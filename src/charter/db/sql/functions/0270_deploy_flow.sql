-- Publishes the shape as the flow's new current version when it differs from the current
-- one, deleting nothing: runs already started finish on the version they pinned.
-- Returns {"status": compiled|verified|deployed, "differences", "versionId", "version"}.
CREATE OR REPLACE FUNCTION charter.deploy_flow(
    p_flow_slug text,
    p_shape jsonb,
    p_compiled jsonb DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_db_shape    jsonb;
    v_differences text[] := '{}';
    v_status      text;
    v_version_id  text;
BEGIN
    PERFORM charter._validate_flow_shape(p_flow_slug, p_shape);
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', p_flow_slug));

    v_db_shape := charter._get_flow_shape(p_flow_slug);
    IF v_db_shape IS NOT NULL THEN
        v_differences := charter._compare_flow_shapes(p_shape, v_db_shape);
    END IF;
    IF v_db_shape IS NOT NULL AND cardinality(v_differences) = 0 THEN
        v_status := 'verified';
        SELECT w.current_version_id INTO v_version_id
          FROM charter.workflows AS w WHERE w.slug = p_flow_slug;
    ELSE
        v_status := CASE WHEN v_db_shape IS NULL THEN 'compiled' ELSE 'deployed' END;
        v_version_id := charter._create_flow_from_shape(p_flow_slug, p_shape, p_compiled);
    END IF;
    RETURN jsonb_build_object(
        'status', v_status, 'differences', to_jsonb(v_differences), 'versionId', v_version_id,
        'version', (SELECT v.version FROM charter.workflow_versions AS v WHERE v.id = v_version_id));
END;
$$;
