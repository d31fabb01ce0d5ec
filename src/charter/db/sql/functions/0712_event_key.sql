-- The key of a document's event (WF-11): the document, the event type and the version.
-- A SQL-standard body without a SET clause, STABLE (as convert_to is): PostgreSQL inlines
-- it where it is called.
CREATE OR REPLACE FUNCTION charter._event_key(p_document_id text, p_event_type text, p_version integer)
RETURNS text
LANGUAGE sql
STABLE
RETURN encode(sha256(convert_to(p_document_id || '|' || p_event_type || '|' || p_version, 'UTF8')), 'hex');
