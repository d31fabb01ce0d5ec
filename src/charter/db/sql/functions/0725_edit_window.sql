-- The edit window of a document, reading its active instance. Both windows are read in
-- the write path, so they hold when no engine runs. An instance that has not seen the
-- document's last change yet may still rest at a node of the state the document left (a
-- transition to a locked state, its event not applied): then the state's window holds too,
-- the stricter of the two, so an approved document is never editable in that moment.
CREATE OR REPLACE FUNCTION charter._edit_window(p_contract jsonb, p_document charter.documents)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_nodes   text[];
    v_windows jsonb;
    v_seen    integer;
    v_node    text;
    v_state   text;
BEGIN
    SELECT i.current_nodes, v.compiled->'editWindows', i.document_version INTO v_nodes, v_windows, v_seen
      FROM charter.workflow_instances AS i
      JOIN charter.workflow_versions AS v ON v.id = i.version_id
     WHERE i.org_id = p_document.org_id AND i.document_id = p_document.id
       AND i.status IN ('running', 'paused');
    v_node := charter._nodes_window(v_nodes, v_windows);
    IF v_node IS NULL OR v_seen >= p_document.version THEN
        RETURN coalesce(v_node, charter._state_window(p_contract, p_document.state));
    END IF;
    v_state := charter._state_window(p_contract, p_document.state);
    RETURN CASE WHEN 'locked' IN (v_node, v_state) THEN 'locked'
                WHEN 'amend_only' IN (v_node, v_state) THEN 'amend_only'
                ELSE 'editable' END;
END;
$$;
