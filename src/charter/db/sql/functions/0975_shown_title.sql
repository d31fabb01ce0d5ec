-- What the dashboard calls a document (its lists, its page, the runs of its workflow):
-- "<entity type> <first 8 of the id>". One function, so every page names a document alike.
CREATE OR REPLACE FUNCTION charter._shown_title(p_document charter.documents)
RETURNS text
LANGUAGE sql
STABLE
RETURN p_document.entity_type || ' ' || left(p_document.id, 8);
