-- One audit row for an act on the document's instance (the document itself does not change:
-- the row carries its current version, and the act in changes under "$instance").
CREATE OR REPLACE FUNCTION charter._instance_audit(
    p_document charter.documents, p_action text, p_actor text, p_reason text, p_instance jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    INSERT INTO charter.document_audit (org_id, document_id, entity_type, version, action, actor, run_as,
                                        via, reason, changes, trace_id)
    VALUES (p_document.org_id, p_document.id, p_document.entity_type, p_document.version, p_action, p_actor,
            'actor', 'api', p_reason, jsonb_build_object('$instance', p_instance),
            replace(gen_random_uuid()::text, '-', ''));
END;
$$;
