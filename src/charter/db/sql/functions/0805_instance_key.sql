-- WF-02: the idempotency key of one node dispatch: (instance, node, token, entity version).
-- A SQL-standard body, no SET clause and STABLE (as convert_to is): PostgreSQL inlines it.
CREATE OR REPLACE FUNCTION charter._instance_key(p_run text, p_node text, p_token text, p_version integer)
RETURNS text
LANGUAGE sql
STABLE
RETURN encode(sha256(convert_to(p_run || '|' || p_node || '|' || p_token || '|' || p_version, 'UTF8')), 'hex');
