-- A retried instance whose document changed while it was failed (those events found no
-- active instance and changed nothing): the change is version drift like any other (WF-05).
CREATE OR REPLACE FUNCTION charter._catch_up(p_instance charter.workflow_instances, p_wf jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_document charter.documents;
    v_event    charter.document_events;
BEGIN
    SELECT * INTO v_document FROM charter.documents AS d
     WHERE d.org_id = p_instance.org_id AND d.id = p_instance.document_id;
    IF v_document.version = p_instance.document_version
       OR EXISTS (SELECT 1 FROM charter.document_events AS e
                   WHERE e.org_id = p_instance.org_id AND e.document_id = p_instance.document_id
                     AND e.status IN ('pending', 'processing', 'failed')) THEN
        RETURN;  -- nothing missed, or its events are still to come
    END IF;
    SELECT * INTO v_event FROM charter.document_events AS e
     WHERE e.org_id = p_instance.org_id AND e.document_id = p_instance.document_id
       AND e.entity_version = v_document.version
     ORDER BY e.id LIMIT 1;
    PERFORM charter._version_drift(p_instance, p_wf, v_document, v_event);
END;
$$;
