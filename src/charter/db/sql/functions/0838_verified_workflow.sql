-- The compiled workflow of a version, refused unless the worker verified it (WF-07).
CREATE OR REPLACE FUNCTION charter._verified_workflow(p_version_id text, p_verified text[], p_refused jsonb)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_refused ? p_version_id THEN
        RAISE EXCEPTION USING ERRCODE = 'CH048',
            MESSAGE = format('Workflow version %s was refused: %s', p_version_id, p_refused->>p_version_id),
            HINT = 'Recompile it as the schema''s owner (charter recompile), then retry the dead letters.';
    END IF;
    IF NOT (p_version_id = ANY (coalesce(p_verified, '{}'))) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH048',
            MESSAGE = format('Workflow version %s has not been verified by this worker yet', p_version_id),
            HINT = 'The worker verifies new versions as it sees them; the event is retried.';
    END IF;
    RETURN (SELECT v.compiled FROM charter.workflow_versions AS v WHERE v.id = p_version_id);
END;
$$;
