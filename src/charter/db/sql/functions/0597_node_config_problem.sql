-- What is wrong with a user node's compiled configuration for its type, NULL when nothing
-- is: the JSON Schema charter.compiler.node_schemas declares (charter._node_config_schemas,
-- generated), so a caller of the SQL API cannot publish a configuration the compiler would
-- refuse (NODE_CONFIG_INVALID). Expressions and text templates inside it are checked by
-- charter._verify_effective itself. A type without a schema (a system node's) has nothing
-- to check here.
CREATE OR REPLACE FUNCTION charter._node_config_problem(p_type text, p_config jsonb)
RETURNS text
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path = ''
AS $$
    SELECT charter._json_schema_problem(p_config, s.schema)
      FROM (SELECT charter._node_config_schemas()->p_type AS schema) AS s
     WHERE s.schema IS NOT NULL
$$;
