-- The dashboard's document list in one call: the org's documents (newest change first),
-- filtered by entity type and state and searched by title (p_query, a substring, any case),
-- each with its title; the entity types and states the filters offer; and the columns the
-- chosen type's contract lists (display.columns; null without columns, or without a type
-- while there are several).
CREATE OR REPLACE FUNCTION charter.documents_shown(
    p_org_id text, p_entity_type text DEFAULT NULL, p_state text DEFAULT NULL,
    p_query text DEFAULT NULL, p_limit integer DEFAULT 100)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    WITH o AS (
        SELECT charter._acting_org(p_org_id) AS org
    ), contracts AS (
        SELECT substr(w.slug, length('envelope:') + 1) AS entity_type, v.contract
          FROM charter.workflows AS w JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
         WHERE w.slug LIKE 'envelope:%' AND v.contract IS NOT NULL
    ), shown AS (
        SELECT d.updated_at, d.id, charter._document_json(ROW(d.*)::charter.documents) AS doc  -- with its title
          FROM charter.documents AS d, o
         WHERE d.org_id = o.org
           AND (p_entity_type IS NULL OR d.entity_type = p_entity_type)
           AND (p_state IS NULL OR d.state = p_state)
           -- LIKE's own wildcards in the query are searched for as themselves.
           AND (p_query IS NULL OR charter._shown_title(ROW(d.*)::charter.documents) ILIKE
                '%' || replace(replace(replace(p_query, '\', '\\'), '%', '\%'), '_', '\_') || '%')
         ORDER BY d.updated_at DESC, d.id DESC
         LIMIT greatest(least(coalesce(p_limit, 100), 1000), 1)
    )
    SELECT jsonb_build_object(
        'documents', coalesce((SELECT jsonb_agg(s.doc ORDER BY s.updated_at DESC, s.id DESC) FROM shown AS s), '[]'),
        'entityTypes', coalesce((SELECT jsonb_agg(c.entity_type ORDER BY c.entity_type) FROM contracts AS c), '[]'),
        'states', coalesce((SELECT jsonb_agg(DISTINCT st->>'id')
                              FROM contracts AS c, jsonb_array_elements(c.contract->'states') AS st
                             WHERE p_entity_type IS NULL OR c.entity_type = p_entity_type), '[]'),
        -- With one entity type only, its documents are all there is: its columns without a filter.
        'columns', (SELECT c.contract #> '{display,columns}' FROM contracts AS c
                     WHERE (c.entity_type = p_entity_type OR p_entity_type IS NULL AND (SELECT count(*) FROM contracts) = 1)
                       AND jsonb_typeof(c.contract #> '{display,columns}') = 'array'))
$$;
