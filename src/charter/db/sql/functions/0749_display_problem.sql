-- What is wrong with a contract's display (null when nothing is), as
-- charter.dsl.contract.EntityContract checks it: an object of "title" (a template whose
-- placeholders are declared fields, entityType or state; {{ and }} for literal braces),
-- "columns" (at most 12) and "summary" (at most 6), lists of declared fields named once.
-- publish_contract refuses a contract with a problem (DISPLAY_INVALID), so the title that
-- charter._document_title renders is the one the contract's author checked.
CREATE OR REPLACE FUNCTION charter._display_problem(p_contract jsonb)
RETURNS text
LANGUAGE sql
IMMUTABLE
RETURN (
    WITH d(display, fields) AS (SELECT p_contract->'display', coalesce(p_contract->'fields', '{}'))
    SELECT x.problem FROM (
        SELECT 1, CASE
            WHEN jsonb_typeof(d.display) IS DISTINCT FROM 'object' THEN 'display is not an object'
            WHEN EXISTS (SELECT 1 FROM jsonb_object_keys(d.display) AS k WHERE k NOT IN ('title', 'columns', 'summary')) THEN
                format('display has %s; it takes title, columns and summary',
                       (SELECT string_agg(quote_literal(k), ', ') FROM jsonb_object_keys(d.display) AS k
                         WHERE k NOT IN ('title', 'columns', 'summary')))
            WHEN d.display ? 'title' AND (jsonb_typeof(d.display->'title') IS DISTINCT FROM 'string'
                                          OR btrim(d.display->>'title') = '' OR length(d.display->>'title') > 200) THEN
                'display.title is not a template of 1 to 200 characters'
            WHEN d.display ? 'title'
                 AND regexp_replace(d.display->>'title', '\{\{|\}\}|\{[A-Za-z_][A-Za-z0-9_]*\}|[^{}]+', '', 'g') <> '' THEN
                format('display.title %L has a brace that is not a placeholder like {invoice_no}; write {{ or }} for a literal brace',
                       d.display->>'title')
            ELSE (SELECT format('display.title uses {%s}, which is not a declared field', m[1])
                    FROM regexp_matches(coalesce(d.display->>'title', ''), '\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}', 'g') AS m
                   WHERE m[1] IS NOT NULL AND m[1] NOT IN ('entityType', 'state') AND NOT d.fields ? m[1]
                   LIMIT 1)
        END
          FROM d
        UNION ALL
        SELECT l.rank, CASE
            WHEN NOT d.display ? l.key THEN NULL
            WHEN jsonb_typeof(d.display->l.key) IS DISTINCT FROM 'array' OR jsonb_array_length(d.display->l.key) > l.most
                 OR (l.key = 'columns' AND jsonb_array_length(d.display->l.key) = 0) THEN
                format('display.%s is not a list of %s to %s declared fields', l.key, l.fewest, l.most)
            ELSE (SELECT format('display.%s names %s, which is not a declared field or is named twice', l.key, f.value)
                    FROM jsonb_array_elements(d.display->l.key) WITH ORDINALITY AS f(value, n)
                   WHERE jsonb_typeof(f.value) IS DISTINCT FROM 'string' OR NOT d.fields ? (f.value #>> '{}')
                      OR EXISTS (SELECT 1 FROM jsonb_array_elements(d.display->l.key) WITH ORDINALITY AS g(value, n)
                                  WHERE g.value = f.value AND g.n < f.n)
                   ORDER BY f.n LIMIT 1)
        END
          FROM d, (VALUES (2, 'columns', 1, 12), (3, 'summary', 0, 6)) AS l(rank, key, fewest, most)
         WHERE jsonb_typeof(d.display) = 'object') AS x(rank, problem)
     WHERE x.problem IS NOT NULL AND p_contract ? 'display'
     ORDER BY x.rank
     LIMIT 1
);
