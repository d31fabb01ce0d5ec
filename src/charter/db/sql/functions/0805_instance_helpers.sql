-- Helpers of the instance engine (seed 002 runtime): keys, graph walks, expression
-- variables and template rendering over a compiled effective workflow.

-- WF-02: the idempotency key of one node dispatch: (instance, node, token, entity version).
-- A SQL-standard body, no SET clause and STABLE (as convert_to is): PostgreSQL inlines it.
CREATE OR REPLACE FUNCTION charter._instance_key(p_run text, p_node text, p_token text, p_version integer)
RETURNS text
LANGUAGE sql
STABLE
RETURN encode(sha256(convert_to(p_run || '|' || p_node || '|' || p_token || '|' || p_version, 'UTF8')), 'hex');

-- Every node reachable from p_from over forward (non-loop) edges, p_from included.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._reachable(p_wf jsonb, p_from text)
RETURNS text[]
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        WITH RECURSIVE r(node) AS (
            SELECT p_from
            UNION
            SELECT e.value->>'target'
              FROM r JOIN LATERAL jsonb_array_elements_text(p_wf #> ARRAY['adjacency', r.node]) AS a(edge) ON true
              JOIN LATERAL (SELECT p_wf #> ARRAY['edgesById', a.edge] AS value) AS e ON true
             WHERE NOT coalesce((e.value->>'loop')::boolean, false)
        )
        SELECT array_agg(node ORDER BY node) FROM r
    );
END;
$$;

-- A node's outgoing edges in evaluation order (priority, id), as stored in the adjacency.
-- A SQL-standard body without a SET clause: PostgreSQL inlines it into the query using it.
CREATE OR REPLACE FUNCTION charter._out_edges(p_wf jsonb, p_node text)
RETURNS TABLE (edge_id text, edge jsonb, n bigint)
LANGUAGE sql
IMMUTABLE
BEGIN ATOMIC
    SELECT a.edge, p_wf #> ARRAY['edgesById', a.edge], a.n
      FROM jsonb_array_elements_text(coalesce(p_wf #> ARRAY['adjacency', p_node], '[]')) WITH ORDINALITY AS a(edge, n);
END;

-- The edge out of p_from that leads to p_to: directly, or through the body slot attached
-- between them (p_from → slot:in … slot:out → p_to).
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._edge_toward(p_wf jsonb, p_from text, p_to text)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT o.edge_id
          FROM charter._out_edges(p_wf, p_from) AS o
         WHERE o.edge->>'target' = p_to
            OR (p_wf #>> ARRAY['nodes', o.edge->>'target', 'type'] = 'slot_entry'
                AND EXISTS (SELECT 1 FROM charter._out_edges(p_wf,
                                'sys:slot:' || (p_wf #>> ARRAY['nodes', o.edge->>'target', 'config', 'slot']) || ':out') AS x
                             WHERE x.edge->>'target' = p_to))
         ORDER BY o.n
         LIMIT 1
    );
END;
$$;

-- How an actor looks to expressions: the directory's user (id, roles, manager, email,
-- phone), or a reserved actor (system, service:NAME) with no roles.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._actor_vars(p_org_id text, p_actor text)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT coalesce(
            (SELECT jsonb_build_object('id', u.user_id, 'roles', to_jsonb(u.roles), 'manager', u.manager_id,
                                       'email', u.email, 'phone', u.phone)
               FROM charter.directory_users AS u WHERE u.org_id = p_org_id AND u.user_id = p_actor),
            jsonb_build_object('id', coalesce(p_actor, 'system'), 'roles', '[]'::jsonb))
    );
END;
$$;

-- The variables every expression of an instance sees (seed 002 § Variable Map).
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._instance_vars(p_instance charter.workflow_instances, p_document charter.documents)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT jsonb_build_object(
            'entity', p_document.data,
            'actor', charter._actor_vars(p_instance.org_id, p_instance.actor),
            'org', coalesce((SELECT o.data FROM charter.directory_orgs AS o WHERE o.org_id = p_instance.org_id), '{}'::jsonb),
            'context', p_instance.context || jsonb_build_object(
                'state', p_document.state, 'version', p_document.version, 'documentId', p_document.id,
                'entityType', p_document.entity_type),
            'now', to_jsonb(to_char(charter._now(p_instance.org_id) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')))
    );
END;
$$;

-- Renders a template's {path} placeholders (e.g. 'delivery:pod:{entity.shipment_id}') from
-- the variables: strings as they are, other values as JSON, a missing path as empty.
CREATE OR REPLACE FUNCTION charter._render(p_template text, p_vars jsonb)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_out   text := '';
    v_rest  text := p_template;
    v_match text[];
    v_value jsonb;
BEGIN
    IF p_template IS NULL THEN
        RETURN NULL;
    END IF;
    LOOP
        v_match := regexp_match(v_rest, '^(.*?)\{([^{}]*)\}(.*)$', 's');
        EXIT WHEN v_match IS NULL;
        v_value := p_vars #> string_to_array(btrim(v_match[2]), '.');
        v_out := v_out || v_match[1] || CASE
            WHEN v_value IS NULL OR jsonb_typeof(v_value) = 'null' THEN ''
            WHEN jsonb_typeof(v_value) = 'string' THEN v_value #>> '{}'
            ELSE v_value::text END;
        v_rest := v_match[3];
    END LOOP;
    RETURN v_out || v_rest;
END;
$$;

-- A template value as JSON: a template that is exactly one placeholder keeps its value's
-- type ('{entity.grand_total}' stays a number); anything else renders to a string. Only for
-- webhook payloads of effective versions stored when they were text templates (they are
-- expressions now, refused as templates at publish).
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._render_value(p_template jsonb, p_vars jsonb)
RETURNS jsonb
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT CASE
            WHEN jsonb_typeof(p_template) <> 'string' THEN p_template
            WHEN (p_template #>> '{}') ~ '^\{[^{}]*\}$' THEN
                coalesce(p_vars #> string_to_array(btrim(substr(p_template #>> '{}', 2, length(p_template #>> '{}') - 2)), '.'), 'null')
            ELSE to_jsonb(charter._render(p_template #>> '{}', p_vars)) END
    );
END;
$$;
