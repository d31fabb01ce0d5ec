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
