CREATE OR REPLACE TRIGGER protect_workflow_version_parents
    BEFORE UPDATE OR DELETE ON charter.workflow_version_parents
    FOR EACH ROW EXECUTE FUNCTION charter._protect_workflow_definitions();
