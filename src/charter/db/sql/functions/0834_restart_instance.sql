-- client.documents.restart: a new instance for a document whose instance was cancelled (by
-- mistake, say) or failed (and a fixed definition is published since), on the org's current
-- effective workflow (else the bare envelope), pinned to the document's current version.
-- It starts where the document is: at the lifecycle state it is in, not at the start (the
-- token is put on that state's node; a $instance evidence row says so with startAt, which
-- the projection replays from), and the engine runs it with the version it verified (WF-07)
-- through a retry wait due now. The old instance stays as it ended. Refused while the
-- document has a running or paused instance (WF-01: one at a time; cancel it first), and
-- for a state the workflow has no node for. An audit row names who restarted it and why.
-- Returns the document.
CREATE OR REPLACE FUNCTION charter.restart_instance(
    p_org_id text, p_document_id text, p_actor text, p_reason text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_document charter.documents := charter._instance_act_document(v_org, p_document_id, p_actor);
    v_previous charter.workflow_instances;
    v_version  charter.workflow_versions;
    v_state    text := 'sys:state:' || v_document.state;
    v_run      text := gen_random_uuid()::text;
    v_instance charter.workflow_instances;
BEGIN
    SELECT * INTO v_previous FROM charter.workflow_instances AS i
     WHERE i.org_id = v_org AND i.entity_type = v_document.entity_type AND i.document_id = v_document.id
     ORDER BY (i.status IN ('running', 'paused')) DESC, i.started_at DESC LIMIT 1;
    IF v_previous.status IN ('running', 'paused') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Document %L already has a %s workflow instance (%s); a document has one at a time',
                             v_document.id, v_previous.status, v_previous.id),
            HINT = format('Cancel it first (client.cancel(%L)), then restart.', v_previous.id);
    END IF;
    SELECT * INTO v_version FROM charter.workflow_versions AS v
     WHERE v.id = charter._instance_version(v_org, v_document);
    IF NOT (v_version.compiled->'nodes' ? v_state) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Document %L is in state %L, which workflow %s (version %s) has no node for',
                             v_document.id, v_document.state, v_version.workflow_slug, v_version.id),
            HINT = 'Publish a definition whose lifecycle has this state, then restart.';
    END IF;
    INSERT INTO charter.runs (id, org_id, workflow_slug, version_id, input)
    VALUES (v_run, v_org, v_version.workflow_slug, v_version.id,
            jsonb_build_object('documentId', v_document.id, 'entityType', v_document.entity_type,
                               'restartedFrom', v_previous.id));
    INSERT INTO charter.workflow_instances (id, org_id, entity_type, document_id, version_id, document_version,
                                            actor, trace_id)
    VALUES (v_run, v_org, v_document.entity_type, v_document.id, v_version.id, v_document.version,
            v_previous.actor, replace(gen_random_uuid()::text, '-', ''))
    RETURNING * INTO v_instance;
    INSERT INTO charter.step_states (run_id, step_slug, org_id, required)
    SELECT v_run, n.key, v_org,
           coalesce((v_version.compiled #>> ARRAY['joinRequirements', n.key, 'requiredTokenCount'])::integer, 1)
      FROM jsonb_each(v_version.compiled->'nodes') AS n;
    UPDATE charter.step_states AS s
       SET status = 'ready', arrivals = s.required, token = 't1', ready_at = clock_timestamp()
     WHERE s.run_id = v_run AND s.org_id = v_org AND s.step_slug = v_state;
    PERFORM charter._node_evidence(v_instance, '$instance', 'start', 't1', 'completed',
        jsonb_build_object('startAt', v_state, 'restartedFrom', v_previous.id, 'by', p_actor, 'reason', p_reason),
        NULL, p_actor);
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, due_at)
    VALUES (v_run, '$retry', v_org, 't1', 'retry', v_document.version, now());
    PERFORM charter._instance_projection(v_run, v_org);
    PERFORM charter._instance_audit(v_document, 'instance.restart', p_actor, p_reason,
        jsonb_build_object('runId', v_run, 'restartedFrom', v_previous.id, 'previousStatus', v_previous.status,
                           'versionId', v_version.id, 'at', v_document.state));
    PERFORM pg_notify('charter_events', v_org);
    RETURN charter.get_document(v_org, v_document.id);
END;
$$;
