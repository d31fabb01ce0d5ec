-- A document as the API returns it, with its title (charter._document_title_of).
-- A SQL-standard body without a SET clause, STABLE (as jsonb_build_object of a timestamp
-- is): PostgreSQL inlines it where it is called.
CREATE OR REPLACE FUNCTION charter._document_json(p_document charter.documents)
RETURNS jsonb
LANGUAGE sql
STABLE
RETURN jsonb_build_object(
    'id', p_document.id, 'entityType', p_document.entity_type, 'orgId', p_document.org_id,
    'version', p_document.version, 'state', p_document.state, 'data', p_document.data,
    'amendedFrom', p_document.amended_from, 'amendedBy', p_document.amended_by,
    'contractVersionId', p_document.contract_version_id,
    'createdAt', p_document.created_at, 'updatedAt', p_document.updated_at,
    'title', charter._document_title_of(p_document));
