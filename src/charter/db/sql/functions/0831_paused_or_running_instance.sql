-- The document's instance that pause and resume act on: running or paused, else
-- RUN_STATE_INVALID naming the action (p_action: 'pause' or 'resume').
CREATE OR REPLACE FUNCTION charter._paused_or_running_instance(p_org_id text, p_document_id text, p_action text)
RETURNS charter.workflow_instances
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.org_id = p_org_id AND i.document_id = p_document_id AND i.status IN ('running', 'paused');
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Document %L has no %s workflow instance to %s', p_document_id,
                             CASE p_action WHEN 'pause' THEN 'running' ELSE 'paused' END, p_action),
            HINT = 'Its instance ended (client.documents.get shows how); restart it with client.documents.restart.';
    END IF;
    RETURN v_instance;
END;
$$;
