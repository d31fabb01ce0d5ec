-- The flow runtime's tables get the row-level security every other org-scoped table has:
-- only charter's functions (running as the schema's owner) touch them today, and a role
-- given access later sees only the org its transaction names.
ALTER TABLE charter.runs ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.runs
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.step_states ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.step_states
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.inbox ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.inbox
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.tasks ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.tasks
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.step_executions ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.step_executions
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.step_receipts ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.step_receipts
    USING (org_id = current_setting('charter.org_id', true));
