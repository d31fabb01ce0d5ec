-- What a version's steps say, derived once (flow_version_facts): as immutable as the steps.
CREATE OR REPLACE TRIGGER protect_flow_version_facts
    BEFORE UPDATE OR DELETE ON charter.flow_version_facts
    FOR EACH ROW EXECUTE FUNCTION charter._protect_workflow_definitions();
