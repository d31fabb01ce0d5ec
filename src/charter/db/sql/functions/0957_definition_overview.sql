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
