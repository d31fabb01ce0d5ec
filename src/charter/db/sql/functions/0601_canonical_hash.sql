-- The hex SHA-256 of an artifact's canonical JSON without its "hash" key: what
-- charter.compiler.compiled.compiled_hash computes.
CREATE OR REPLACE FUNCTION charter._canonical_hash(p_artifact jsonb)
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT encode(sha256(convert_to(charter._canonical_json(p_artifact - 'hash'), 'UTF8')), 'hex')
$$;
