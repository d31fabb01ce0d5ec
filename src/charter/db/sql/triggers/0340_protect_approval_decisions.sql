CREATE OR REPLACE TRIGGER protect_approval_decisions
    BEFORE UPDATE OR DELETE ON charter.approval_decisions
    FOR EACH ROW EXECUTE FUNCTION charter._protect_approval_decisions();
