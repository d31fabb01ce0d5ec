-- A stored document's title: charter._document_title with the display of the contract
-- version the document follows. PL/pgSQL, so that charter._document_json, which calls it,
-- keeps a body PostgreSQL inlines (no sub-select).
CREATE OR REPLACE FUNCTION charter._document_title_of(p_document charter.documents)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN charter._document_title(
        (SELECT v.contract->'display' FROM charter.workflow_versions AS v WHERE v.id = p_document.contract_version_id),
        p_document.entity_type, p_document.id, p_document.state, p_document.data);
END;
$$;
