-- Where an instance is, for drawing: its pinned compiled workflow and each node's status
-- (readiness rows: waiting, ready, running, completed, skipped, failed, cancelled).
-- p_org_id as for get_run.
CREATE OR REPLACE FUNCTION charter.instance_position(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_result jsonb;
    v_org      text := charter._run_org(p_run_id, p_org_id);  -- looked up before the query, not nested in it (Citus)
BEGIN
    SELECT jsonb_build_object(
               'runId', i.id, 'documentId', i.document_id, 'status', i.status, 'versionId', i.version_id,
               'compiled', v.compiled,
               'nodes', coalesce((SELECT jsonb_object_agg(s.step_slug, s.status) FROM charter.step_states AS s
                                   WHERE s.run_id = i.id AND s.org_id = i.org_id), '{}'::jsonb))
      INTO v_result
      FROM charter.workflow_instances AS i JOIN charter.workflow_versions AS v ON v.id = i.version_id
     WHERE i.id = p_run_id AND i.org_id = v_org;
    IF v_result IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH005', MESSAGE = format('Run %L is not a document workflow instance', p_run_id),
            HINT = 'Pass the runId of a document''s workflow (charter status --document ID shows it).';
    END IF;
    RETURN v_result;
END;
$$;
