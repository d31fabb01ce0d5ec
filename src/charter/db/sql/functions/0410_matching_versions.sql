-- The flow versions a worker's code can run: for each flow slug in p_shapes ({slug: shape,
-- as extract_flow_shape() gives it}), the flow versions whose steps, step types and
-- dependencies equal the code's (options are not compared: they are tuned in place and
-- read from the database at run time), leaving out p_untrusted.
CREATE OR REPLACE FUNCTION charter._matching_versions(p_shapes jsonb, p_untrusted text[] DEFAULT '{}')
RETURNS text[]
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(array_agg(v.id ORDER BY v.id), '{}')
      FROM jsonb_each(p_shapes) AS f(slug, shape)
      JOIN charter.workflow_versions AS v
        ON v.workflow_slug = f.slug AND v.definition_kind = 'flow'
     WHERE v.id <> ALL (coalesce(p_untrusted, '{}'))
       AND cardinality(charter._compare_flow_shapes(f.shape, charter._version_shape(v.id))) = 0
$$;
