-- The orgs this session's worker serves (charter.serve_orgs, a JSON array its connections set
-- when the worker is given orgs: `charter worker --org`), or NULL for every org.
CREATE OR REPLACE FUNCTION charter._served_orgs()
RETURNS text[]
LANGUAGE sql
STABLE
RETURN (SELECT array_agg(o ORDER BY o)
          FROM jsonb_array_elements_text(
                   nullif(current_setting('charter.serve_orgs', true), '')::jsonb) AS o);
