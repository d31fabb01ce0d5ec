CREATE OR REPLACE TRIGGER protect_document_versions
    BEFORE UPDATE OR DELETE ON charter.document_versions
    FOR EACH ROW EXECUTE FUNCTION charter._protect_evidence();
