CREATE OR REPLACE TRIGGER restrict_status_regression
    BEFORE UPDATE OF status ON charter.workflow_instances
    FOR EACH ROW EXECUTE FUNCTION charter._restrict_status_regression();
CREATE OR REPLACE TRIGGER restrict_status_regression
    BEFORE UPDATE OF status ON charter.document_events
    FOR EACH ROW EXECUTE FUNCTION charter._restrict_status_regression();
CREATE OR REPLACE TRIGGER restrict_status_regression
    BEFORE UPDATE OF status ON charter.side_effects
    FOR EACH ROW EXECUTE FUNCTION charter._restrict_status_regression();
