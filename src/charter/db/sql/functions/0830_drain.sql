-- Runs every ready node while the instance knows the document's current version; a node
-- that fails a charter check fails the instance with the error (its own work rolled back).
CREATE OR REPLACE FUNCTION charter._drain(p_run text, p_org_id text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_document charter.documents;
    v_wf       jsonb;
    v_node     text;
    v_steps    integer := 0;
    v_state    text;
    v_message  text;
    v_hint     text;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_run AND i.org_id = p_org_id;
    SELECT v.compiled INTO v_wf FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id;
    LOOP
        SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_run AND i.org_id = p_org_id;
        EXIT WHEN v_instance.status <> 'running';
        SELECT * INTO v_document FROM charter.documents AS d
         WHERE d.org_id = v_instance.org_id AND d.id = v_instance.document_id;
        -- Nodes that read or change the document wait while it has changes the engine has not
        -- seen yet (their events come next); the lifecycle's own nodes move on regardless.
        SELECT s.step_slug INTO v_node FROM charter.step_states AS s
         WHERE s.run_id = p_run AND s.org_id = p_org_id AND s.status = 'ready'
           AND (v_document.version = v_instance.document_version
                OR v_wf #>> ARRAY['nodes', s.step_slug, 'type'] IN
                   ('start', 'end', 'lifecycle_state', 'slot_entry', 'slot_exit', 'parallel_split', 'parallel_join'))
         ORDER BY s.ready_at, s.step_slug  -- first ready, first run: a split's paths in edge order
         LIMIT 1;
        EXIT WHEN v_node IS NULL;
        v_steps := v_steps + 1;
        IF v_steps > 10000 THEN
            RAISE EXCEPTION 'instance % ran more than 10000 nodes in one advance', p_run;
        END IF;
        BEGIN
            PERFORM charter._dispatch(v_instance, v_wf, v_document, v_node);
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT, v_hint = PG_EXCEPTION_HINT;
            IF v_state NOT LIKE 'CH%' THEN
                RAISE;  -- not a verdict on the workflow (a lost connection, a deadlock): retried
            END IF;
            PERFORM charter._fail_node(v_instance, v_wf, v_node,
                jsonb_build_object('sqlstate', v_state, 'message', v_message, 'hint', nullif(v_hint, ''), 'node', v_node));
        END;
    END LOOP;
    PERFORM charter._instance_projection(p_run, p_org_id);
END;
$$;
