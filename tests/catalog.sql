-- Everything in schema charter that makes up its shape, one row per object, so two
-- databases can be compared. Row order and OIDs do not matter; definitions do.
SELECT 'table' AS kind, c.relname AS name,
       c.relkind::text || ' ' || coalesce(pg_get_partkeydef(c.oid), '') || ' rls=' || c.relrowsecurity::text
         || ' acl=' || coalesce(c.relacl::text, '') || ' options=' || coalesce(c.reloptions::text, '') AS definition
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'charter' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
UNION ALL
SELECT 'column', c.relname || '.' || lpad(a.attnum::text, 3, '0') || ' ' || a.attname,
       format_type(a.atttypid, a.atttypmod) || ' notnull=' || a.attnotnull::text
         || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
         || ' identity=' || a.attidentity::text || ' generated=' || a.attgenerated::text
         || ' collation=' || coalesce(a.attcollation::regcollation::text, '')
  FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE n.nspname = 'charter' AND a.attnum > 0 AND NOT a.attisdropped
   AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'c')
UNION ALL
SELECT 'constraint', c.conrelid::regclass::text || '.' || c.conname, pg_get_constraintdef(c.oid)
  FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
 WHERE n.nspname = 'charter'
UNION ALL
SELECT 'index', i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = 'charter'
UNION ALL
SELECT 'trigger', t.tgrelid::regclass::text || '.' || t.tgname, pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'charter' AND NOT t.tgisinternal
UNION ALL
SELECT 'function', p.oid::regprocedure::text,
       pg_get_functiondef(p.oid) || ' acl=' || coalesce(p.proacl::text, '')
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'charter' AND p.prokind IN ('f', 'p', 'w')
UNION ALL
SELECT 'aggregate', p.oid::regprocedure::text, p.prokind::text
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'charter' AND p.prokind = 'a'
UNION ALL
SELECT 'type', t.typname,
       t.typtype::text || ' ' || coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
                                             FROM pg_enum e WHERE e.enumtypid = t.oid), '')
         || coalesce(' domain ' || format_type(t.typbasetype, t.typtypmod), '')
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
 WHERE n.nspname = 'charter' AND t.typtype IN ('e', 'd')
UNION ALL
SELECT 'comment', c.relname || coalesce('.' || a.attname, ''), d.description
  FROM pg_description d
  JOIN pg_class c ON c.oid = d.objoid AND d.classoid = 'pg_class'::regclass
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.objsubid AND d.objsubid > 0
 WHERE n.nspname = 'charter'
UNION ALL
SELECT 'policy', p.schemaname || '.' || p.tablename || '.' || p.policyname,
       p.cmd || ' ' || coalesce(p.qual, '') || ' ' || coalesce(p.with_check, '')
  FROM pg_policies p WHERE p.schemaname = 'charter'
UNION ALL
SELECT 'partition', c.relname, pg_get_expr(c.relpartbound, c.oid)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'charter' AND c.relispartition
ORDER BY 1, 2, 3
