-- The one-column checks of the tables every mutation writes become domains. PostgreSQL
-- reads a table's CHECK constraints back from their stored text in every statement that
-- writes the table, where a domain's checks are read once per session and kept: with four
-- tables written per mutation, reading the checks was a tenth of mutate()'s work. The
-- checks and their names stay the same; only where PostgreSQL keeps them changes. No table
-- is rewritten: each column keeps its base type, and the new domains' checks validate the
-- rows already there.
CREATE DOMAIN charter.document_id AS text
    CONSTRAINT document_id_is_not_empty CHECK (length(VALUE) BETWEEN 1 AND 200);
CREATE DOMAIN charter.document_version AS integer
    CONSTRAINT document_version_is_positive CHECK (VALUE >= 1);
CREATE DOMAIN charter.document_data AS jsonb
    CONSTRAINT document_data_is_an_object CHECK (jsonb_typeof(VALUE) = 'object');
CREATE DOMAIN charter.audit_via AS text
    CONSTRAINT audit_via_is_known CHECK (VALUE IN ('api', 'workflow', 'system'));
CREATE DOMAIN charter.event_type AS text
    CONSTRAINT event_type_is_known CHECK (VALUE IN (
        'on_create', 'on_lifecycle_transition', 'on_mutation', 'on_amendment', 'on_amended'));
CREATE DOMAIN charter.event_status AS text
    CONSTRAINT event_status_is_known
        CHECK (VALUE IN ('pending', 'processing', 'completed', 'failed', 'dead_letter'));
CREATE DOMAIN charter.outbox_source AS text
    CONSTRAINT outbox_source_is_known CHECK (VALUE IN ('events', 'side_effects'));

-- What depends on the columns by name, where it exists (in a new database the repeatable
-- files come after every migration); the repeatable files make them again.
DROP FUNCTION IF EXISTS charter._document_json(charter.documents);
DROP TRIGGER IF EXISTS restrict_status_regression ON charter.document_events;

ALTER TABLE charter.documents
    DROP CONSTRAINT document_id_is_not_empty,
    DROP CONSTRAINT document_version_is_positive,
    DROP CONSTRAINT document_data_is_an_object;
ALTER TABLE charter.documents
    ALTER COLUMN id TYPE charter.document_id,
    ALTER COLUMN version TYPE charter.document_version,
    ALTER COLUMN data TYPE charter.document_data;

ALTER TABLE charter.document_audit DROP CONSTRAINT audit_via_is_known;
ALTER TABLE charter.document_audit ALTER COLUMN via TYPE charter.audit_via;

ALTER TABLE charter.document_events
    DROP CONSTRAINT event_type_is_known,
    DROP CONSTRAINT event_status_is_known;
ALTER TABLE charter.document_events
    ALTER COLUMN event_type TYPE charter.event_type,
    ALTER COLUMN status TYPE charter.event_status;

ALTER TABLE charter.outbox_receipts DROP CONSTRAINT outbox_source_is_known;
ALTER TABLE charter.outbox_receipts ALTER COLUMN source TYPE charter.outbox_source;
