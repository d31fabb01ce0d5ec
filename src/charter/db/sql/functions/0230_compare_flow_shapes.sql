-- The structural differences between the shape in the code (p_local) and the shape in the
-- database (p_db), word for word as charter.compiler.flows.compare_flow_shapes() gives
-- them: ordered by step slug, then missing/extra, type, dependencies, config. Options are ignored.
CREATE OR REPLACE FUNCTION charter._compare_flow_shapes(p_local jsonb, p_db jsonb)
RETURNS text[]
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    WITH code AS (
        SELECT s->>'slug' AS slug, s->>'stepType' AS step_type, s->'config' AS config,
               ARRAY(SELECT d FROM jsonb_array_elements_text(s->'dependencies') AS d
                      ORDER BY d COLLATE "C") AS deps
          FROM jsonb_array_elements(p_local->'steps') AS s
    ), db AS (
        SELECT s->>'slug' AS slug, s->>'stepType' AS step_type, s->'config' AS config,
               ARRAY(SELECT d FROM jsonb_array_elements_text(s->'dependencies') AS d
                      ORDER BY d COLLATE "C") AS deps
          FROM jsonb_array_elements(p_db->'steps') AS s
    ), differences AS (
        SELECT c.slug, 1 AS rank,
               format('Step ''%s'' is in the code but not in the database', c.slug) AS message
          FROM code AS c WHERE NOT EXISTS (SELECT 1 FROM db WHERE db.slug = c.slug)
        UNION ALL
        SELECT d.slug, 1,
               format('Step ''%s'' is in the database but not in the code', d.slug)
          FROM db AS d WHERE NOT EXISTS (SELECT 1 FROM code WHERE code.slug = d.slug)
        UNION ALL
        SELECT c.slug, 2,
               format('Step ''%s'' changed type: %s in the database, %s in the code',
                      c.slug, d.step_type, c.step_type)
          FROM code AS c JOIN db AS d USING (slug)
         WHERE c.step_type <> d.step_type
        UNION ALL
        SELECT c.slug, 3,
               CASE WHEN c.step_type = 'map' AND d.step_type = 'map' THEN
                   format('Step ''%s'' changed the array it maps over: %s in the database, %s in the code',
                          c.slug, coalesce(d.deps[1], 'run'), coalesce(c.deps[1], 'run'))
               ELSE
                   format('Step ''%s'' changed dependencies: [%s] in the database, [%s] in the code',
                          c.slug, array_to_string(d.deps, ', '), array_to_string(c.deps, ', '))
               END
          FROM code AS c JOIN db AS d USING (slug)
         WHERE c.deps <> d.deps
        UNION ALL
        SELECT c.slug, 4,
               format('Step ''%s'' changed its config: %s in the database, %s in the code',
                      c.slug, coalesce(d.config::text, 'none'), coalesce(c.config::text, 'none'))
          FROM code AS c JOIN db AS d USING (slug)
         WHERE c.step_type = d.step_type AND c.config IS DISTINCT FROM d.config
    )
    SELECT coalesce(array_agg(message ORDER BY slug COLLATE "C", rank), '{}')
      FROM differences
$$;
