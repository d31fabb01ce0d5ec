-- Row-level security: the org a transaction names (SET charter.org_id) is all it sees.
ALTER TABLE charter.directory_users ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.directory_orgs ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.document_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.document_audit ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.document_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.outbox_receipts ENABLE ROW LEVEL SECURITY;

CREATE POLICY org_isolation ON charter.directory_users
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.directory_orgs
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.documents
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.document_versions
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.document_audit
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.document_events
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.outbox_receipts
    USING (org_id = current_setting('charter.org_id', true));

ALTER TABLE charter.workflow_instances ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.workflow_instances
    USING (org_id = current_setting('charter.org_id', true));

ALTER TABLE charter.instance_waits ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.instance_waits
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.inbound_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.inbound_events
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.side_effects ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.side_effects
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.approval_requests ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.approval_requests
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.rules ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.rules
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.schedules ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.schedules
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.test_clock ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.test_clock
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.approval_decisions ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.approval_decisions
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.approval_chains ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.approval_chains
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.approval_delegations ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.approval_delegations
    USING (org_id = current_setting('charter.org_id', true));
ALTER TABLE charter.org_secrets ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.org_secrets
    USING (org_id = current_setting('charter.org_id', true));

-- The flow runtime (migration 0021).
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
