CREATE OR REPLACE TRIGGER protect_document_audit
    BEFORE UPDATE OR DELETE ON charter.document_audit
    FOR EACH ROW EXECUTE FUNCTION charter._protect_evidence();
