-- Old document evidence may be archived (issue #38): charter.archive_evidence moves a
-- finished month's partitions of step_executions and side_effects into this schema, still
-- attached to their parents, so every reader keeps reading them through the parent.
CREATE SCHEMA charter_archive;
COMMENT ON SCHEMA charter_archive IS
    'Archived monthly partitions of charter.step_executions and charter.side_effects (charter maintenance --archive-before): still partitions of their parents in schema charter, read through them; retention never drops them.';
REVOKE ALL ON SCHEMA charter_archive FROM PUBLIC;
