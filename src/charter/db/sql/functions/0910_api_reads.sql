-- What the HTTP API needs beyond the client's calls: which of these runs belong to the org
-- (a run of another org is answered 404, as if it did not exist).
CREATE OR REPLACE FUNCTION charter.runs_of_org(p_org_id text, p_run_ids text[])
RETURNS text[]
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}') FROM charter.runs AS r
     WHERE r.id = ANY (p_run_ids) AND r.org_id = charter._acting_org(p_org_id)
$$;

-- A run's graph for the dashboard: its compiled workflow (flow or document workflow) and
-- each node's state and token; NULL when the run is not the org's.
CREATE OR REPLACE FUNCTION charter.run_graph(p_org_id text, p_run_id text)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
               'runId', r.id, 'status', r.status, 'compiled', v.compiled,
               'nodes', coalesce((SELECT jsonb_object_agg(s.step_slug, jsonb_build_object('status', s.status,
                                                                                          'token', s.token))
                                    FROM charter._step_states_of(r) AS s), '{}'::jsonb))
      FROM charter.runs AS r JOIN charter.workflow_versions AS v ON v.id = r.version_id
     WHERE r.id = p_run_id AND r.org_id = charter._acting_org(p_org_id)
$$;

-- The definitions page: every entity type with a published contract, the envelope version
-- the org is on (pinned; the newest for a type it has not used) and the newest one, and the
-- org's versions of it (patches, drafts included, and effective workflows), newest first.
CREATE OR REPLACE FUNCTION charter.definition_overview(p_org_id text)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'entityType', t.entity_type,
        'envelope', jsonb_build_object('versionId', e.id, 'version', e.contract->'version', 'compiled', e.compiled),
        'latestEnvelopeVersion', n.contract->'version',
        'current', (SELECT w.current_version_id FROM charter.workflows AS w
                     WHERE w.slug = format('effective:%s:%s', o.org, t.entity_type)),
        'versions', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                'versionId', v.id, 'version', v.version, 'kind', v.definition_kind,
                                'status', v.status, 'createdAt', v.created_at, 'hash', v.compiled_hash,
                                'compiled', CASE WHEN v.definition_kind = 'effective' THEN v.compiled END)
                            ORDER BY v.created_at DESC, v.version DESC), '[]'::jsonb)
                       FROM charter.workflow_versions AS v
                      WHERE v.workflow_slug IN (format('effective:%s:%s', o.org, t.entity_type),
                                                format('org:%s:%s', o.org, t.entity_type))))
      FROM (SELECT charter._acting_org(p_org_id) AS org) AS o
      CROSS JOIN LATERAL (SELECT substr(w.slug, length('envelope:') + 1) AS entity_type, w.current_version_id
                            FROM charter.workflows AS w WHERE w.slug LIKE 'envelope:%') AS t
      JOIN charter.workflow_versions AS n ON n.id = t.current_version_id
      JOIN charter.workflow_versions AS e
        ON e.id = coalesce((SELECT p.envelope_version_id FROM charter.org_contracts AS p
                             WHERE p.org_id = o.org AND p.entity_type = t.entity_type), n.id)
     ORDER BY t.entity_type
$$;

-- The inbox's "recently closed": requests the user was asked to decide that closed in the
-- last p_days without waiting for them any more (approved, rejected, cancelled, voided —
-- with the reason, e.g. the document changed after the version they were shown).
CREATE OR REPLACE FUNCTION charter.approvals_closed_for(p_org_id text, p_user text, p_days integer DEFAULT 7)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter._request_json(r) FROM charter.approval_requests AS r
     WHERE r.org_id = charter._acting_org(p_org_id) AND r.status <> 'pending' AND p_user = ANY (r.approvers)
       AND r.closed_at > now() - make_interval(days => greatest(coalesce(p_days, 7), 1))
     ORDER BY r.closed_at DESC, r.id
     LIMIT 50
$$;
