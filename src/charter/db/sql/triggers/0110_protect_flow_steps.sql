CREATE OR REPLACE TRIGGER protect_flow_steps
    BEFORE UPDATE OR DELETE ON charter.flow_steps
    FOR EACH ROW EXECUTE FUNCTION charter._protect_workflow_definitions();
