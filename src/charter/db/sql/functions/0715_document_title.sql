-- A document's title as people read it, the one rendering every page and API uses: its
-- contract's display.title with each {field} replaced by the value in p_data ({entityType}
-- and {state} by the document's own; "—" for a missing, null or empty value; {{ and }} for
-- a literal brace), on one line, at most 200 characters. Without a title template (or with
-- a malformed one, which publish refuses), or when none of the fields it names has a value
-- yet, "<Entity type> <first 8 of the id>".
-- IMMUTABLE: usable in a WHERE (a list searched by title with ILIKE) and in an index.
-- PL/pgSQL, not SQL: a SQL function with sub-selects is never inlined and would be planned
-- again in every transaction that returns a document; PL/pgSQL keeps its plan.
CREATE OR REPLACE FUNCTION charter._document_title(
    p_display jsonb, p_entity_type text, p_id text, p_state text, p_data jsonb)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
PARALLEL SAFE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT CASE WHEN length(t.title) > 200 THEN left(t.title, 199) || '…' ELSE t.title END
          FROM (SELECT coalesce(
                    (SELECT nullif(btrim(regexp_replace(string_agg(coalesce(p.value, '—'), '' ORDER BY p.n), '\s+', ' ', 'g')), '')
                       FROM (SELECT x.n, m[2] AS name, m[2] IS NOT NULL AND m[2] NOT IN ('entityType', 'state') AS is_field,
                                    CASE WHEN m[2] IS NULL THEN CASE m[1] WHEN '{{' THEN '{' WHEN '}}' THEN '}' ELSE m[1] END
                                         ELSE nullif(CASE m[2] WHEN 'entityType' THEN p_entity_type
                                                              WHEN 'state' THEN p_state
                                                              WHEN '' THEN NULL
                                                              ELSE CASE WHEN jsonb_typeof(p_data->m[2]) <> 'null'
                                                                        THEN p_data->>m[2] END END, '') END AS value
                               FROM regexp_matches(p_display->>'title', '(\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|[^{}]+)', 'g')
                                    WITH ORDINALITY AS x(m, n)
                              WHERE jsonb_typeof(p_display->'title') = 'string'
                                AND regexp_replace(p_display->>'title', '\{\{|\}\}|\{[A-Za-z_][A-Za-z0-9_]*\}|[^{}]+', '', 'g') = '') AS p
                     HAVING bool_or(p.is_field AND p.value IS NOT NULL) OR NOT bool_or(p.is_field)),
                    upper(left(replace(p_entity_type, '_', ' '), 1)) || substr(replace(p_entity_type, '_', ' '), 2)
                        || ' ' || left(p_id, 8)) AS title) AS t
    );
END;
$$;
