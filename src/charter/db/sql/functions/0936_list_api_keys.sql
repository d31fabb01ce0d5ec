CREATE OR REPLACE FUNCTION charter.list_api_keys(p_org_id text DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object('id', k.id, 'orgId', k.org_id, 'actor', k.actor, 'label', k.label,
                              'createdAt', k.created_at, 'createdBy', k.created_by,
                              'lastUsedAt', k.last_used_at, 'revokedAt', k.revoked_at, 'platform', k.platform)
      FROM charter.api_keys AS k
     WHERE p_org_id IS NULL OR k.org_id = p_org_id
     ORDER BY k.org_id, k.created_at
$$;
