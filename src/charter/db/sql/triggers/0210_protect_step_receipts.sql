CREATE OR REPLACE TRIGGER protect_step_receipts
    BEFORE UPDATE OR DELETE ON charter.step_receipts
    FOR EACH ROW EXECUTE FUNCTION charter._protect_evidence();
