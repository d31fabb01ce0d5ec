CREATE OR REPLACE TRIGGER protect_workflow_versions
    BEFORE UPDATE OR DELETE ON charter.workflow_versions
    FOR EACH ROW EXECUTE FUNCTION charter._protect_workflow_definitions();
