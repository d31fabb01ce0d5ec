-- Compares a flow's shape from the code with the database's current version, changing
-- nothing: {"status": verified | missing | mismatch, "differences", "versionId"}. The read
-- half of ensure_flow_compiled, for roles that may not publish flows.
CREATE OR REPLACE FUNCTION charter.check_flow(p_flow_slug text, p_shape jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_db_shape    jsonb := charter._get_flow_shape(p_flow_slug);
    v_differences text[];
BEGIN
    IF v_db_shape IS NULL THEN
        RETURN jsonb_build_object('status', 'missing', 'differences', '[]'::jsonb, 'versionId', NULL);
    END IF;
    v_differences := charter._compare_flow_shapes(p_shape, v_db_shape);
    RETURN jsonb_build_object(
        'status', CASE WHEN cardinality(v_differences) = 0 THEN 'verified' ELSE 'mismatch' END,
        'differences', to_jsonb(v_differences),
        'versionId', (SELECT w.current_version_id FROM charter.workflows AS w WHERE w.slug = p_flow_slug));
END;
$$;
