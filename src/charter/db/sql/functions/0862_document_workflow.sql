-- A document's workflow instance (its latest), or null: run id, status, current nodes,
-- waits (a failed one: a fix, with its error), error, and `runnable` — whether the engine still has something to do right now
-- (an unapplied event, a ready node, a due wait, a queued handler task) — and `settled`:
-- nothing more happens without outside input (a person, an event, a resume), so no timer,
-- delivery (in backoff too), handler task or retry is pending either.
CREATE OR REPLACE FUNCTION charter.document_workflow(p_org_id text, p_document_id text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_instance charter.workflow_instances;
    v_wf       jsonb;
    v_pending  boolean;
    v_runnable boolean;
    v_type     text;
BEGIN
    SELECT d.entity_type INTO v_type FROM charter.documents AS d WHERE d.org_id = v_org AND d.id = p_document_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH030',
            MESSAGE = format('Document %L does not exist in org %L', p_document_id, v_org),
            HINT = 'Check the document id and the client''s org.';
    END IF;
    v_pending := EXISTS (SELECT 1 FROM charter.document_events AS e
                          WHERE e.org_id = v_org AND e.document_id = p_document_id
                            AND e.status IN ('pending', 'processing', 'failed'));
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.org_id = v_org AND i.entity_type = v_type AND i.document_id = p_document_id
     ORDER BY (i.status IN ('running', 'paused')) DESC, i.started_at DESC LIMIT 1;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('runId', NULL, 'status', NULL, 'runnable', v_pending, 'pendingEvents', v_pending,
                                  'settled', NOT v_pending, 'currentNodes', '[]'::jsonb, 'waitingFor', '[]'::jsonb);
    END IF;
    SELECT v.compiled INTO v_wf FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id;
    -- A paused instance's events wait for its resume, not for the engine.
    v_runnable := v_pending AND v_instance.status <> 'paused' OR v_instance.status = 'running' AND (
           EXISTS (SELECT 1 FROM charter.step_states AS s WHERE s.run_id = v_instance.id AND s.org_id = v_instance.org_id AND s.status = 'ready')
        OR EXISTS (SELECT 1 FROM charter.instance_waits AS w
                    WHERE w.run_id = v_instance.id AND w.org_id = v_instance.org_id AND (w.kind = 'handler' OR w.due_at <= charter._now(v_instance.org_id)))
        -- An effect a worker is sending, or will send now (not one waiting to retry).
        OR EXISTS (SELECT 1 FROM charter.side_effects AS x
                    WHERE x.run_id = v_instance.id AND x.org_id = v_instance.org_id
                      AND (x.status = 'processing' OR (x.status IN ('pending', 'failed') AND x.next_retry_at <= now()))));
    RETURN jsonb_build_object(
        'runId', v_instance.id, 'status', v_instance.status, 'versionId', v_instance.version_id,
        'workflow', (SELECT v.workflow_slug FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id),
        'documentVersion', v_instance.document_version, 'currentNodes', to_jsonb(v_instance.current_nodes),
        'context', v_instance.context, 'error', v_instance.error, 'cancelReason', v_instance.cancel_reason,
        'startedAt', v_instance.started_at, 'completedAt', v_instance.completed_at,
        -- A failed instance waits for a fix: someone removes the cause its error names (say, an
        -- approval nobody may decide: APPROVERS_EMPTY) and retries it (retry_run).
        'waitingFor', CASE WHEN v_instance.status IN ('running', 'paused') THEN charter._waiting_for(v_instance.id, v_instance.org_id, v_wf)
                           WHEN v_instance.status = 'failed' AND v_instance.error IS NOT NULL THEN jsonb_build_array(jsonb_build_object(
                               'kind', 'fix', 'node', coalesce(v_instance.error->>'node', '$instance'), 'detail', v_instance.error))
                           ELSE '[]'::jsonb END,
        'pendingEvents', v_pending,
        'runnable', v_runnable,
        -- A wait for a person or an event (an approval's escalation, an event's timeout
        -- included) is outside input; a timer, a delivery and its retries, a handler task
        -- and a retry are not, nor any effect of the instance still to be sent.
        'settled', NOT v_runnable AND (v_instance.status <> 'running' OR (
               NOT EXISTS (SELECT 1 FROM charter.instance_waits AS w
                            WHERE w.run_id = v_instance.id AND w.org_id = v_instance.org_id
                              AND w.kind IN ('timer', 'delivery', 'handler', 'retry'))
           AND NOT EXISTS (SELECT 1 FROM charter.side_effects AS x
                            WHERE x.run_id = v_instance.id AND x.org_id = v_instance.org_id
                              AND x.status IN ('pending', 'processing', 'failed')))));
END;
$$;
