-- What the dashboard calls a document (its lists, its page, the runs of its workflow): the
-- title its contract's display renders (charter._document_title). One function, so every
-- page names a document alike.
CREATE OR REPLACE FUNCTION charter._shown_title(p_document charter.documents)
RETURNS text
LANGUAGE sql
STABLE
RETURN charter._document_title(
    (SELECT v.contract->'display' FROM charter.workflow_versions AS v WHERE v.id = p_document.contract_version_id),
    p_document.entity_type, p_document.id, p_document.state, p_document.data);
