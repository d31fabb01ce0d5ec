-- The type the compiler gives an AST node by itself (its operands' types do not change it):
-- an operator is boolean, a literal its value's type, now a string, a list an array, a path
-- an object (a root alone), its declared field's type (entity.<field> with p_fields), or any.
CREATE OR REPLACE FUNCTION charter._ast_type(p_node jsonb, p_fields jsonb)
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT CASE p_node->>'type'
        WHEN 'op' THEN 'boolean'
        WHEN 'literal' THEN jsonb_typeof(p_node->'value')
        WHEN 'now' THEN 'string'
        WHEN 'list' THEN 'array'
        WHEN 'var' THEN CASE
            WHEN strpos(p_node->>'path', '.') = 0 THEN 'object'
            WHEN jsonb_typeof(p_fields) = 'object' AND (p_node->>'path') ~ '^entity\.[^.]+$'
                THEN coalesce(p_fields->>split_part(p_node->>'path', '.', 2), 'any')
            ELSE 'any' END
        ELSE 'any'
    END
$$;
