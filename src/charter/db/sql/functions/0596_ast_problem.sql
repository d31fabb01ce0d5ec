-- What charter.expr.compile_expression can make, checked in SQL before an expression is
-- stored (put_rule, publish_org_definition) and before charter.eval_expr evaluates one: the
-- node kinds of the AST (literal, var, now, list, op with its operator and arity), its depth
-- (MAX_DEPTH 10), its dereferences (MAX_DEREFERENCES 20), its size (what 500 characters of
-- source can make) and the variables it may read (paths under entity, actor, org or
-- context; with p_fields, entity.<field> must be a declared field), and its types: the
-- operands of && || ! true or false, == and != between comparable types, ordering between
-- two numbers or two strings, in a list on the right, contains a list or text on the left,
-- and with p_boolean (conditions, rules) the whole able to be true or false. NULL when the
-- AST is one the compiler could have made, else what is wrong with it. Without p_types
-- (charter.eval_expr, before every evaluation) the types are left to the checks at store.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._ast_problem(p_ast jsonb, p_fields jsonb DEFAULT NULL,
                                                p_boolean boolean DEFAULT false, p_types boolean DEFAULT true)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        WITH RECURSIVE tree(node, depth) AS (
            SELECT p_ast, 1
            UNION ALL
            SELECT child.value, tree.depth + 1
              FROM tree, jsonb_array_elements(CASE
                       WHEN jsonb_typeof(tree.node) <> 'object' THEN '[]'::jsonb
                       WHEN tree.node->>'type' = 'op' AND jsonb_typeof(tree.node->'args') = 'array' THEN tree.node->'args'
                       WHEN tree.node->>'type' = 'list' AND jsonb_typeof(tree.node->'items') = 'array' THEN tree.node->'items'
                       ELSE '[]'::jsonb END) AS child
             WHERE tree.depth <= 10
        ),
        checked AS (
            SELECT tree.depth, CASE
                WHEN jsonb_typeof(tree.node) IS DISTINCT FROM 'object' THEN
                    format('%s is not an expression node', left(coalesce(tree.node::text, 'null'), 120))
                WHEN tree.node->>'type' = 'literal' THEN CASE
                    WHEN tree.node - 'type' - 'value' <> '{}' OR NOT tree.node ? 'value'
                         OR jsonb_typeof(tree.node->'value') NOT IN ('number', 'string', 'boolean', 'null') THEN
                        format('the literal %s is not a number, string, true, false or null', left(tree.node::text, 120))
                    WHEN jsonb_typeof(tree.node->'value') = 'string' AND length(tree.node->>'value') > 500 THEN
                        'a text literal is longer than an expression may be (500 characters)'
                    END
                WHEN tree.node->>'type' = 'var' THEN CASE
                    WHEN tree.node - 'type' - 'path' <> '{}' OR jsonb_typeof(tree.node->'path') IS DISTINCT FROM 'string'
                         OR (tree.node->>'path') !~ '^(entity|actor|org|context)(\.[A-Za-z_][A-Za-z0-9_]*)*$' THEN
                        format('%s reads no variable: paths start with entity, actor, org or context (e.g. entity.total)',
                               left(tree.node::text, 120))
                    WHEN jsonb_typeof(p_fields) = 'object' AND (tree.node->>'path') LIKE 'entity.%'
                         AND NOT p_fields ? split_part(tree.node->>'path', '.', 2) THEN
                        format('%s is not a declared field of entity', tree.node->>'path')
                    END
                WHEN tree.node->>'type' = 'now' THEN CASE
                    WHEN tree.node <> '{"type": "now"}' THEN format('%s is not an expression node', left(tree.node::text, 120))
                    END
                WHEN tree.node->>'type' = 'list' THEN CASE
                    WHEN tree.node - 'type' - 'items' <> '{}' OR jsonb_typeof(tree.node->'items') IS DISTINCT FROM 'array' THEN
                        format('%s is not a list of expressions', left(tree.node::text, 120))
                    END
                WHEN tree.node->>'type' = 'op' THEN CASE
                    WHEN tree.node - 'type' - 'op' - 'args' <> '{}' OR jsonb_typeof(tree.node->'args') IS DISTINCT FROM 'array'
                         OR NOT (tree.node->>'op' = '!' AND jsonb_array_length(tree.node->'args') = 1
                                 OR tree.node->>'op' IN ('==', '!=', '>', '>=', '<', '<=', 'in', 'contains', '&&', '||')
                                    AND jsonb_array_length(tree.node->'args') = 2) THEN
                        format('%s is not an operator the expression language has (== != > >= < <= in contains && || with two operands, ! with one)',
                               left(tree.node::text, 120))
                    WHEN NOT p_types THEN NULL
                    WHEN tree.node->>'op' IN ('!', '&&', '||')
                         AND EXISTS (SELECT 1 FROM jsonb_array_elements(tree.node->'args') AS a
                                      WHERE charter._ast_type(a.value, p_fields) NOT IN ('boolean', 'any')) THEN
                        format('%L needs true/false operands: %s', tree.node->>'op', left(tree.node::text, 120))
                    ELSE (SELECT CASE
                        WHEN tree.node->>'op' IN ('==', '!=') AND NOT ('any' IN (t.a, t.b) OR 'null' IN (t.a, t.b) OR t.a = t.b) THEN
                            format('%L compares %s with %s, which can never be equal', tree.node->>'op', t.a, t.b)
                        WHEN tree.node->>'op' IN ('>', '>=', '<', '<=')
                             AND NOT (t.a IN ('number', 'any') AND t.b IN ('number', 'any')
                                      OR t.a IN ('string', 'any') AND t.b IN ('string', 'any')) THEN
                            format('%L orders two numbers or two strings, not %s and %s', tree.node->>'op', t.a, t.b)
                        WHEN tree.node->>'op' = 'in' AND t.b NOT IN ('array', 'any') THEN
                            format('''in'' needs a list on its right, not %s', t.b)
                        WHEN tree.node->>'op' = 'contains' AND t.a NOT IN ('array', 'string', 'any') THEN
                            format('''contains'' needs a list or a string on its left, not %s', t.a)
                        END
                          FROM (SELECT charter._ast_type(tree.node->'args'->0, p_fields) AS a,
                                       charter._ast_type(tree.node->'args'->1, p_fields) AS b) AS t)
                    END
                ELSE format('%s is not an expression node (literal, var, now, list or op)', left(tree.node::text, 120))
                END AS problem,
                CASE WHEN jsonb_typeof(tree.node) = 'object' AND tree.node->>'type' = 'var'
                     THEN length(tree.node->>'path') - length(replace(tree.node->>'path', '.', '')) ELSE 0 END AS dots
              FROM tree
        )
        SELECT coalesce(
            (SELECT c.problem FROM checked AS c WHERE c.problem IS NOT NULL ORDER BY c.depth LIMIT 1),
            CASE WHEN p_boolean AND charter._ast_type(p_ast, p_fields) NOT IN ('boolean', 'any') THEN
                     format('this decides between true and false, but it is %s; compare it (e.g. entity.total > 0)',
                            charter._ast_type(p_ast, p_fields))
                 WHEN max(c.depth) > 10 THEN 'the expression nests more than 10 levels deep; the limit is 10'
                 WHEN count(*) > 500 THEN format('the expression has %s nodes; 500 characters of source make fewer', count(*))
                 WHEN sum(c.dots) > 20 THEN format('the expression follows %s field references (a.b counts one); the limit is 20', sum(c.dots))
            END)
          FROM checked AS c
    );
END;
$$;
