-- What publish_org_definition checks of a compiled effective workflow before it stores it,
-- so that a caller of the SQL API cannot publish what charter.compiler.effective would
-- refuse (docs/architecture.md, Where the checks live). Compared with the envelope version's
-- own compiled artifact (p_envelope.compiled, the bare envelope the platform published) and
-- its slots (p_envelope.dsl):
--   WF-08  every system node and edge of the envelope present and unchanged, or the edge
--          replaced by the one slot attached on it (entry -> sys:slot:X:in ... :out -> exit);
--          no other system node; slotMap, stableRegionNodes, systemGateIntegrity, adjacency
--          and reverseAdjacency as the compiler derives them from the nodes and edges;
--   WF-06  every other node usr:<slotId>:<id> of a declared slot with a user node type, and
--          every edge of a slot node staying inside its slot (or ending at its exit);
--          edit windows never looser than the envelope's and the slot's;
--   the graph acyclic but for the envelope's loops (topologicalOrder must be an order of
--   the nodes that every other edge follows), every node reachable from sys:start and
--   reaching sys:end, parallel splits of two or more paths and joins requiring exactly the
--   paths that arrive from their split; every expression and text template one the
--   compiler makes (charter._ast_problem), and last the hash recomputed from the artifact's
--   canonical JSON (WF-07).
-- Raises the SQLSTATE of the compiler's code for the first problem found (docs/errors.md).
-- One set-based query: nodes and edges are read once, a join's ancestors up to its split are a
-- recursive CTE, no per-node loop.
CREATE OR REPLACE FUNCTION charter._verify_effective(p_compiled jsonb, p_envelope charter.workflow_versions)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_env      jsonb := p_envelope.compiled;
    v_slots    jsonb := coalesce(p_envelope.dsl->'slots', '[]');
    v_fields   jsonb := p_envelope.contract->'fields';
    v_state    text;
    v_problem  text;
BEGIN
    -- The shape the rest reads, so that no cast below can fail on a crafted value.
    SELECT format('%s is not an %s', k.key, k.kind) INTO v_problem
      FROM (VALUES ('nodes', 'object'), ('edgesById', 'object'), ('adjacency', 'object'),
                   ('reverseAdjacency', 'object'), ('topologicalOrder', 'array'),
                   ('joinRequirements', 'object'), ('editWindows', 'object'),
                   ('stableRegionNodes', 'array'), ('slotMap', 'object'),
                   ('systemGateIntegrity', 'object')) AS k(key, kind)
     WHERE jsonb_typeof(p_compiled->k.key) IS DISTINCT FROM k.kind
     LIMIT 1;
    IF v_problem IS NULL AND p_compiled->>'kind' IS DISTINCT FROM 'effective' THEN
        v_problem := 'its kind is not "effective"';
    ELSIF v_problem IS NULL AND p_compiled->'slug' IS DISTINCT FROM p_compiled->'entityType' THEN
        v_problem := 'its slug is not its entity type';
    ELSIF v_problem IS NULL AND (jsonb_typeof(p_compiled->'compilerVersion') IS DISTINCT FROM 'string'
                                 OR (p_compiled->>'compilerVersion') !~ '^[0-9]+\.[0-9]+\.[0-9]+$') THEN
        v_problem := 'its compilerVersion is not a version like 1.1.0';
    END IF;
    IF v_problem IS NULL THEN
        SELECT format('node %s is not {"id": %s, "type": <text>, "config": <object>}', n.key, to_jsonb(n.key))
          INTO v_problem
          FROM jsonb_each(p_compiled->'nodes') AS n
         WHERE jsonb_typeof(n.value) IS DISTINCT FROM 'object' OR n.value->'id' IS DISTINCT FROM to_jsonb(n.key)
            OR jsonb_typeof(n.value->'type') IS DISTINCT FROM 'string'
            OR jsonb_typeof(n.value->'config') IS DISTINCT FROM 'object'
         LIMIT 1;
    END IF;
    IF v_problem IS NULL THEN
        SELECT format('edge %s is not {"id": %s, "source" and "target" (nodes of the graph), "priority": <number>, "provenance": <text>}',
                      e.key, to_jsonb(e.key))
          INTO v_problem
          FROM jsonb_each(p_compiled->'edgesById') AS e
         WHERE jsonb_typeof(e.value) IS DISTINCT FROM 'object' OR e.value->'id' IS DISTINCT FROM to_jsonb(e.key)
            OR jsonb_typeof(e.value->'source') IS DISTINCT FROM 'string'
            OR jsonb_typeof(e.value->'target') IS DISTINCT FROM 'string'
            OR NOT coalesce((p_compiled->'nodes') ? (e.value->>'source'), false)
            OR NOT coalesce((p_compiled->'nodes') ? (e.value->>'target'), false)
            OR jsonb_typeof(e.value->'priority') IS DISTINCT FROM 'number'
            OR jsonb_typeof(e.value->'provenance') IS DISTINCT FROM 'string'
            OR (e.value ? 'loop' AND e.value->'loop' IS DISTINCT FROM 'true'::jsonb)
            OR (e.value ? 'label' AND jsonb_typeof(e.value->'label') IS DISTINCT FROM 'string')
            OR (e.value ? 'condition' AND jsonb_typeof(e.value->'condition') IS DISTINCT FROM 'object')
         LIMIT 1;
    END IF;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('Not a compiled effective workflow of %L: %s', p_compiled->>'entityType', v_problem),
            HINT = 'Publish with client.definitions.publish(contract, org_definition), which compiles it.';
    END IF;

    WITH RECURSIVE
    nodes AS MATERIALIZED (
        SELECT n.key AS node_id, n.value AS node, n.value->>'type' AS type,
               CASE WHEN (v_env->'nodes') ? n.key THEN 'system'
                    WHEN a.slot IS NOT NULL THEN 'attach_' || a.side
                    WHEN u.slot IS NOT NULL THEN 'user'
                    WHEN n.key LIKE 'sys:%' THEN 'unknown_system'
                    ELSE 'outside' END AS kind,
               CASE WHEN NOT (v_env->'nodes') ? n.key THEN coalesce(a.slot, u.slot) END AS slot_id
          FROM jsonb_each(p_compiled->'nodes') AS n
          LEFT JOIN LATERAL (
              SELECT m[1] AS slot, m[2] AS side FROM regexp_match(n.key, '^sys:slot:(.+):(in|out)$') AS m
               WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(v_slots) AS s WHERE s->>'slotId' = m[1])) AS a ON true
          LEFT JOIN LATERAL (
              SELECT m[1] AS slot FROM regexp_match(n.key, '^usr:(.+):([A-Za-z0-9_-]+)$') AS m
               WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(v_slots) AS s WHERE s->>'slotId' = m[1])) AS u ON true
    ),
    slots AS MATERIALIZED (
        SELECT s->>'slotId' AS slot_id, s->>'entryNodeId' AS entry, s->>'exitNodeId' AS exit_,
               s->>'defaultEditWindow' AS window, coalesce(s->'stableRegion' = 'true'::jsonb, false) AS stable,
               EXISTS (SELECT 1 FROM nodes AS n WHERE n.kind = 'attach_in' AND n.slot_id = s->>'slotId') AS attached,
               coalesce(v_env #> ARRAY['edgesById', (s->>'entryNodeId') || '->' || (s->>'exitNodeId'), 'loop'] = 'true'::jsonb,
                        false) AS on_loop
          FROM jsonb_array_elements(v_slots) AS s
    ),
    edges AS MATERIALIZED (
        SELECT e.key AS edge_id, e.value AS edge, e.value->>'source' AS source, e.value->>'target' AS target,
               coalesce(e.value->'loop' = 'true'::jsonb, false) AS loop,
               s.kind AS s_kind, s.slot_id AS s_slot, t.kind AS t_kind, t.slot_id AS t_slot
          FROM jsonb_each(p_compiled->'edgesById') AS e
          JOIN nodes AS s ON s.node_id = e.value->>'source'
          JOIN nodes AS t ON t.node_id = e.value->>'target'
    ),
    topo AS MATERIALIZED (
        SELECT o.node_id, o.n FROM jsonb_array_elements_text(p_compiled->'topologicalOrder') WITH ORDINALITY AS o(node_id, n)
    ),
    arriving AS MATERIALIZED (
        SELECT e.target AS node_id, count(*) AS n FROM edges AS e WHERE NOT e.loop GROUP BY e.target
    ),
    entered AS MATERIALIZED (SELECT DISTINCT e.target AS node_id FROM edges AS e),
    left_ AS MATERIALIZED (SELECT DISTINCT e.source AS node_id FROM edges AS e),
    joins AS MATERIALIZED (
        SELECT j.node_id, coalesce(ar.n, 0) AS arriving,
               p_compiled #>> ARRAY['joinRequirements', j.node_id, 'split'] AS split
          FROM nodes AS j LEFT JOIN arriving AS ar USING (node_id) WHERE j.type = 'parallel_join'
    ),
    -- A join's ancestors up to the split it names (what lies before the split cannot be a
    -- path of the split in an acyclic graph): the region between them, not the whole graph.
    ancestors(join_id, split, node_id) AS (
        SELECT j.node_id, j.split, e.source FROM joins AS j JOIN edges AS e ON e.target = j.node_id AND NOT e.loop
        UNION
        SELECT a.join_id, a.split, e.source FROM ancestors AS a JOIN edges AS e ON e.target = a.node_id AND NOT e.loop
         WHERE a.node_id IS DISTINCT FROM a.split
    ),
    split_paths AS MATERIALIZED (
        SELECT j.node_id, count(e.edge_id) AS paths,
               bool_or(s.type = 'parallel_split' AND a0.node_id IS NOT NULL) AS split_before
          FROM joins AS j
          LEFT JOIN nodes AS s ON s.node_id = j.split
          LEFT JOIN ancestors AS a0 ON a0.join_id = j.node_id AND a0.node_id = j.split
          LEFT JOIN edges AS e ON e.source = j.split AND NOT e.loop
               AND (e.target = j.node_id OR EXISTS (SELECT 1 FROM ancestors AS a
                                                     WHERE a.join_id = j.node_id AND a.node_id = e.target))
         GROUP BY j.node_id
    ),
    -- Every compiled expression; a condition node's and an edge's condition decide.
    expressions AS (
        SELECT x.value AS compiled, (n.type = 'condition' AND x.value = n.node #> '{config,expression}') AS decides
          FROM nodes AS n, jsonb_path_query(n.node, 'strict $.** ? (@.type() == "object" && exists(@.ast))') AS x(value)
        UNION ALL
        SELECT x.value, x.value = e.edge->'condition'
          FROM edges AS e, jsonb_path_query(e.edge, 'strict $.** ? (@.type() == "object" && exists(@.ast))') AS x(value)
    ),
    templates AS (
        SELECT n.node_id, t.value #>> '{}' AS text
          FROM nodes AS n, LATERAL (
              SELECT n.node->'config'->k.key FROM unnest(ARRAY['eventKey', 'url', 'to', 'subject', 'body']) AS k(key)
              UNION ALL
              SELECT h.value FROM jsonb_each(CASE WHEN jsonb_typeof(n.node->'config'->'headers') = 'object'
                                                  THEN n.node->'config'->'headers' ELSE '{}' END) AS h) AS t(value)
         WHERE n.type IN ('wait_event', 'webhook_out', 'notification') AND jsonb_typeof(t.value) = 'string'
    ),
    problems(rank, sqlstate, problem) AS (
        -- WF-08: the envelope's nodes and edges, present and unchanged
        SELECT 10, 'CH140', format(CASE WHEN a.value IS NULL THEN 'missing system node %s'
                                        ELSE 'system node %s was altered' END, en.key)
          FROM jsonb_each(v_env->'nodes') AS en LEFT JOIN jsonb_each(p_compiled->'nodes') AS a ON a.key = en.key
         WHERE a.value IS DISTINCT FROM en.value
        UNION ALL
        SELECT 11, 'CH140', format('unknown system node %s', n.node_id) FROM nodes AS n WHERE n.kind = 'unknown_system'
        UNION ALL
        SELECT 12, 'CH140', format('%s is not the attachment of slot %s the compiler makes', n.node_id, n.slot_id)
          FROM nodes AS n
         WHERE n.kind IN ('attach_in', 'attach_out') AND NOT coalesce(
               n.type = CASE n.kind WHEN 'attach_in' THEN 'slot_entry' ELSE 'slot_exit' END
               AND (n.node->'config') - 'mode' = jsonb_build_object('slot', n.slot_id)
               AND n.node->'config'->>'mode' = ANY (CASE n.kind WHEN 'attach_in' THEN ARRAY['serial', 'branch']
                                                                ELSE ARRAY['single', 'join'] END)
               AND EXISTS (SELECT 1 FROM nodes AS o WHERE o.slot_id = n.slot_id AND o.kind <> n.kind
                                                      AND o.kind IN ('attach_in', 'attach_out')), false)
        UNION ALL
        SELECT 13, 'CH140', CASE WHEN a.value IS NULL THEN format('system edge %s is missing', ee.key)
                                 WHEN s.slot_id IS NOT NULL THEN format('slot %s is attached, but the system edge %s it replaces is still there', s.slot_id, ee.key)
                                 ELSE format('system edge %s was altered', ee.key) END
          FROM jsonb_each(v_env->'edgesById') AS ee
          LEFT JOIN jsonb_each(p_compiled->'edgesById') AS a ON a.key = ee.key
          LEFT JOIN slots AS s ON s.attached AND s.entry = ee.value->>'source' AND s.exit_ = ee.value->>'target'
         WHERE (a.value IS NULL AND s.slot_id IS NULL)
            OR (a.value IS NOT NULL AND (a.value IS DISTINCT FROM ee.value OR s.slot_id IS NOT NULL))
        UNION ALL
        SELECT 14, 'CH140', format('unexpected system edge %s -> %s', e.source, e.target)
          FROM edges AS e WHERE e.s_kind = 'system' AND e.t_kind = 'system' AND NOT (v_env->'edgesById') ? e.edge_id
        UNION ALL
        SELECT 15, 'CH140', format('slot %s must sit on its system edge: one edge %s -> sys:slot:%s:in, one sys:slot:%s:out -> %s',
                                   s.slot_id, s.entry, s.slot_id, s.slot_id, s.exit_)
          FROM slots AS s
         WHERE s.attached AND (
               (SELECT count(*) = 1 AND bool_and(e.source = s.entry AND NOT e.loop AND e.edge->'priority' = '0'::jsonb
                                                 AND e.edge->'label' IS NOT DISTINCT FROM
                                                     v_env #> ARRAY['edgesById', s.entry || '->' || s.exit_, 'label'])
                  FROM edges AS e WHERE e.target = format('sys:slot:%s:in', s.slot_id)) IS NOT TRUE
            OR (SELECT count(*) = 1 AND bool_and(e.target = s.exit_ AND e.loop = s.on_loop)
                  FROM edges AS e WHERE e.source = format('sys:slot:%s:out', s.slot_id)) IS NOT TRUE)
        UNION ALL
        SELECT 45, 'CH140', 'slotMap does not name each node''s slot (envelope for the system''s own)'
         WHERE p_compiled->'slotMap' IS DISTINCT FROM (
               SELECT coalesce(jsonb_object_agg(n.node_id, coalesce(n.slot_id, 'envelope')), '{}') FROM nodes AS n)
        UNION ALL
        SELECT 45, 'CH140', 'stableRegionNodes is not the entry and nodes of every stable-region slot'
         WHERE p_compiled->'stableRegionNodes' IS DISTINCT FROM (
               SELECT coalesce(jsonb_agg(r.node_id ORDER BY r.node_id COLLATE "C"), '[]') FROM (
                   SELECT s.entry AS node_id FROM slots AS s WHERE s.stable
                   UNION
                   SELECT n.node_id FROM nodes AS n JOIN slots AS s ON s.stable AND s.slot_id = n.slot_id) AS r)
        UNION ALL
        SELECT 45, 'CH140', 'systemGateIntegrity is not the envelope''s'
         WHERE p_compiled->'systemGateIntegrity' IS DISTINCT FROM v_env->'systemGateIntegrity'
        UNION ALL
        SELECT 45, 'CH140', 'adjacency does not list each node''s edges (by priority, then id) as edgesById has them'
         WHERE p_compiled->'adjacency' IS DISTINCT FROM (
               SELECT coalesce(jsonb_object_agg(n.node_id, coalesce(o.ids, '[]')), '{}')
                 FROM nodes AS n LEFT JOIN (
                      SELECT e.source, jsonb_agg(e.edge_id ORDER BY (e.edge->>'priority')::numeric, e.edge_id COLLATE "C") AS ids
                        FROM edges AS e GROUP BY e.source) AS o ON o.source = n.node_id)
        UNION ALL
        SELECT 45, 'CH140', 'reverseAdjacency does not list each node''s arriving edges as edgesById has them'
         WHERE p_compiled->'reverseAdjacency' IS DISTINCT FROM (
               SELECT coalesce(jsonb_object_agg(n.node_id, coalesce(i.ids, '[]')), '{}')
                 FROM nodes AS n LEFT JOIN (
                      SELECT e.target, jsonb_agg(e.edge_id ORDER BY e.edge_id COLLATE "C") AS ids
                        FROM edges AS e GROUP BY e.target) AS i ON i.target = n.node_id)
        -- WF-06: an org's nodes live in their slot's namespace, its edges stay in the slot
        UNION ALL
        SELECT 20, 'CH142', format('node %s is outside every slot''s namespace: an org''s nodes are usr:<slotId>:<id> (letters, digits, _ and -) of a declared slot (WF-06)', n.node_id)
          FROM nodes AS n WHERE n.kind = 'outside'
        UNION ALL
        SELECT 25, 'CH143', format('node %s has type %s, which only the system envelope may use', n.node_id, n.type)
          FROM nodes AS n
         WHERE n.kind = 'user' AND n.type <> ALL (ARRAY['action', 'approval', 'condition', 'parallel_split', 'parallel_join',
                                                         'wait_timer', 'wait_event', 'webhook_out', 'notification', 'script', 'rule'])
        UNION ALL SELECT 26, 'CH150', format('node %s: %s (fix the setting, or publish what the compiler makes)', n.node_id, c.problem) FROM nodes AS n, charter._node_config_problem(n.type, n.node->'config') AS c(problem) WHERE n.kind = 'user' AND c.problem IS NOT NULL
        UNION ALL
        SELECT 30, 'CH141', format('edge %s connects %s -> %s, which leaves slot %s: edges stay inside their slot (WF-06)',
                                   e.edge_id, e.source, e.target, coalesce(e.s_slot, e.t_slot))
          FROM edges AS e
         WHERE (e.s_kind = 'user' AND NOT (e.t_slot IS NOT DISTINCT FROM e.s_slot AND e.t_kind IN ('user', 'attach_out')))
            OR (e.t_kind = 'user' AND NOT (e.s_slot IS NOT DISTINCT FROM e.t_slot AND e.s_kind IN ('user', 'attach_in')))
            OR (e.s_kind = 'attach_in' AND NOT (e.t_kind = 'user' AND e.t_slot = e.s_slot))
            OR (e.t_kind = 'attach_out' AND NOT (e.s_kind = 'user' AND e.s_slot = e.t_slot))
        UNION ALL
        SELECT 40, 'CH144', format('the effective workflow loosens or drops the edit window of %L', n.node_id)
          FROM nodes AS n LEFT JOIN slots AS s ON s.slot_id = n.slot_id
         WHERE coalesce(array_position(ARRAY['editable', 'amend_only', 'locked'], p_compiled #>> ARRAY['editWindows', n.node_id]), 0)
               < coalesce(array_position(ARRAY['editable', 'amend_only', 'locked'],
                                         CASE WHEN n.kind = 'system' THEN v_env #>> ARRAY['editWindows', n.node_id] ELSE s.window END), 1)
        -- acyclic but for the lifecycle's loops, reachable, splits and joins well formed
        UNION ALL
        SELECT 50, 'CH145', format('edge %s (%s -> %s) is marked as a loop; only the envelope''s lifecycle may loop back (WF-06)',
                                   e.edge_id, e.source, e.target)
          FROM edges AS e WHERE e.loop AND e.s_kind NOT IN ('system', 'attach_out')
        UNION ALL
        SELECT 51, 'CH145', 'topologicalOrder is not an order of the graph''s nodes'
         WHERE (SELECT count(*) FROM topo) <> (SELECT count(*) FROM nodes)
            OR (SELECT count(DISTINCT t.node_id) FROM topo AS t JOIN nodes AS n USING (node_id)) <> (SELECT count(*) FROM nodes)
        UNION ALL
        SELECT 52, 'CH145', format('edge %s (%s -> %s) closes a cycle; only the envelope''s lifecycle may loop back (WF-06)',
                                   e.edge_id, e.source, e.target)
          FROM edges AS e JOIN topo AS s ON s.node_id = e.source JOIN topo AS t ON t.node_id = e.target
         WHERE NOT e.loop AND s.n >= t.n
        UNION ALL
        -- Reachability without walking the graph: once the checks above hold, the system
        -- nodes and edges are the envelope's (where every node lies between sys:start and
        -- sys:end), each slot hangs between its entry and exit, and a slot's nodes are
        -- acyclic with edges only among themselves and its attachments. Following edges
        -- backwards from a slot node then always ends at the slot's :in (forwards, at :out),
        -- unless it stops at a node with no edge arriving (leaving): so every node is
        -- reached from sys:start when only sys:start has none arriving, and reaches sys:end
        -- when only sys:end has none leaving.
        SELECT 60, 'CH146', format('node %s cannot be reached from sys:start; connect it', n.node_id)
          FROM nodes AS n LEFT JOIN entered AS x USING (node_id)
         WHERE x.node_id IS NULL AND n.node_id <> 'sys:start'
        UNION ALL
        SELECT 61, 'CH146', format('node %s never reaches sys:end; give it a way out', n.node_id)
          FROM nodes AS n LEFT JOIN left_ AS x USING (node_id)
         WHERE x.node_id IS NULL AND n.node_id <> 'sys:end'
        UNION ALL
        SELECT 70, 'CH148', format('node %s: a parallel_split needs two or more outgoing paths, has %s', n.node_id, count(e.edge_id))
          FROM nodes AS n LEFT JOIN edges AS e ON e.source = n.node_id AND NOT e.loop
         WHERE n.type = 'parallel_split' GROUP BY n.node_id HAVING count(e.edge_id) < 2
        UNION ALL
        SELECT 75, 'CH147', format('node %s: a parallel_join waits for the paths its parallel_split (here %s) sends towards it, and %s arrive; join exactly the split''s paths',
                                   j.node_id, coalesce(j.split, 'none'), j.arriving)
          FROM joins AS j JOIN split_paths AS p USING (node_id)
         WHERE j.arriving < 2 OR NOT coalesce(p.split_before, false) OR p.paths <> j.arriving
        UNION ALL
        SELECT 76, 'CH147', 'joinRequirements is not what the nodes and edges require (a merge of several paths waits for all, a lifecycle merge for the first, a join for its split''s paths)'
         WHERE p_compiled->'joinRequirements' IS DISTINCT FROM (
               SELECT coalesce(jsonb_object_agg(n.node_id, CASE
                          WHEN n.type = 'parallel_join' THEN jsonb_build_object(
                              'requiredTokenCount', ar.n, 'mode', coalesce(n.node #> '{config,mode}', '"all"'),
                              'split', p_compiled #> ARRAY['joinRequirements', n.node_id, 'split'])
                          WHEN n.type IN ('start', 'lifecycle_state', 'lifecycle_gate', 'end', 'slot_entry')
                              THEN '{"requiredTokenCount": 1, "mode": "exclusive"}'::jsonb
                          ELSE jsonb_build_object('requiredTokenCount', ar.n, 'mode', 'all') END), '{}')
                 FROM arriving AS ar JOIN nodes AS n USING (node_id)
                WHERE ar.n > 1 OR n.type = 'parallel_join')
        -- expressions and text templates as the compiler makes them
        UNION ALL
        SELECT 80, 'CH021', format('expression %s: %s', left(x.compiled->>'expression', 80), x.problem)
          FROM (SELECT e.compiled, charter._compiled_expression_problem(e.compiled, v_fields, e.decides) AS problem
                  FROM expressions AS e) AS x
         WHERE x.problem IS NOT NULL
        UNION ALL
        SELECT 81, 'CH021', format('node %s: the placeholder {%s} is not a variable path like {entity.shipment_id}', t.node_id, m[1])
          FROM templates AS t, regexp_matches(t.text, '\{([^{}]*)\}', 'g') AS m
         WHERE regexp_replace(m[1], '^\s+|\s+$', '', 'g') !~ '^(entity|actor|org|context)(\.[A-Za-z_][A-Za-z0-9_]*)*$'
            OR (jsonb_typeof(v_fields) = 'object' AND regexp_replace(m[1], '^\s+|\s+$', '', 'g') LIKE 'entity.%'
                AND NOT v_fields ? split_part(regexp_replace(m[1], '^\s+|\s+$', '', 'g'), '.', 2))
        -- WF-07: the hash is the artifact's own
        UNION ALL
        SELECT 90, 'CH149', format('the artifact does not match its hash (stored %s…, recomputed %s…): it was changed after compilation',
                                   left(coalesce(p_compiled->>'hash', 'none'), 12), left(h.hash, 12))
          FROM (SELECT charter._canonical_hash(p_compiled) AS hash) AS h
         WHERE h.hash IS DISTINCT FROM p_compiled->>'hash'
    )
    SELECT p.sqlstate, p.problem INTO v_state, v_problem
      FROM problems AS p ORDER BY p.rank, p.problem COLLATE "C" LIMIT 1;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = v_state,
            MESSAGE = format('The effective workflow of %L is refused: %s', p_compiled->>'entityType', v_problem),
            HINT = 'Publish what charter''s compiler makes: client.definitions.publish(contract, org_definition) compiles the org definition against its envelope; org definitions change slots only.';
    END IF;
END;
$$;
