-- Archived monthly partitions of the evidence (charter.archive_evidence): tables of schema
-- charter_archive that stay partitions of their parents in schema charter.
CREATE SCHEMA charter_archive;
COMMENT ON SCHEMA charter_archive IS
    'Archived monthly partitions of charter.step_executions and charter.side_effects (charter maintenance --archive-before): still partitions of their parents in schema charter, read through them; retention never drops them.';
REVOKE ALL ON SCHEMA charter_archive FROM PUBLIC;
