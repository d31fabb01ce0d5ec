CREATE OR REPLACE TRIGGER protect_outbox_receipts
    BEFORE UPDATE OR DELETE ON charter.outbox_receipts
    FOR EACH ROW EXECUTE FUNCTION charter._protect_evidence();
