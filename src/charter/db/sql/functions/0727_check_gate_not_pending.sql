-- A gate whose way in from the document's state runs through a body slot is the
-- workflow's to pass (when the body finishes, as system): a user's transition through it
-- would skip the body, so it is refused (WORKFLOW_GATE_PENDING). The workflow is the
-- document's active instance's, else the one a new instance would follow.
CREATE OR REPLACE FUNCTION charter._check_gate_not_pending(p_document charter.documents, p_gate text)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_wf      jsonb;
    v_run     text;
    v_state   text := 'sys:state:' || p_document.state;
    v_gate    text := 'sys:gate:' || p_gate;
    v_waiting jsonb;
BEGIN
    -- Only an org's effective workflow fills slots; a bare envelope's gates are all direct.
    -- One read, as every user's transition makes it: the active instance's workflow, else the
    -- one a new instance would follow.
    SELECT i.id, v.compiled INTO v_run, v_wf
      FROM (SELECT) AS document
      LEFT JOIN charter.workflow_instances AS i
        ON i.org_id = p_document.org_id AND i.document_id = p_document.id AND i.status IN ('running', 'paused')
      JOIN charter.workflow_versions AS v
        ON v.id = coalesce(i.version_id, charter._instance_version(p_document.org_id, p_document))
     WHERE v.definition_kind = 'effective';
    IF v_wf IS NULL OR NOT (v_wf->'nodes' ? v_gate)
       OR EXISTS (SELECT 1 FROM charter._out_edges(v_wf, v_state) AS o WHERE o.edge->>'target' = v_gate) THEN
        RETURN;
    END IF;
    IF charter._edge_toward(v_wf, v_state, v_gate) IS NULL THEN
        RETURN;  -- not a way out of this state in the workflow: mutate's own checks decide
    END IF;
    IF v_run IS NOT NULL THEN
        v_waiting := charter._waiting_for(v_run, p_document.org_id, v_wf);
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH041',
        MESSAGE = format('Gate %s of document %L is passed by its workflow when the body between state %s and the gate finishes%s',
                         p_gate, p_document.id, p_document.state,
                         CASE WHEN v_waiting IS NULL OR jsonb_array_length(v_waiting) = 0 THEN ''
                              ELSE format(' (it waits for: %s)', (SELECT string_agg(w->>'kind' || ' at ' || (w->>'node'), ', ')
                                                                    FROM jsonb_array_elements(v_waiting) AS w)) END),
        HINT = 'Complete what the workflow waits for (an approval, an event); a user may not skip the body.';
END;
$$;
