CREATE OR REPLACE TRIGGER protect_step_executions
    BEFORE UPDATE OR DELETE ON charter.step_executions
    FOR EACH ROW EXECUTE FUNCTION charter._restrict_step_execution_updates();
