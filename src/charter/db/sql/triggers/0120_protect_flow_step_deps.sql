CREATE OR REPLACE TRIGGER protect_flow_step_deps
    BEFORE UPDATE OR DELETE ON charter.flow_step_deps
    FOR EACH ROW EXECUTE FUNCTION charter._protect_workflow_definitions();
