-- The shape of a flow's current version as stored, in the format extract_flow_shape()
-- produces; NULL when the flow does not exist or has no flow version.
CREATE OR REPLACE FUNCTION charter._get_flow_shape(p_flow_slug text)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT charter._version_shape(w.current_version_id)
      FROM charter.workflows AS w
     WHERE w.slug = p_flow_slug
$$;
