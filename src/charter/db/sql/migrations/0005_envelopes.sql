-- System envelopes are stored as immutable default definitions: an envelope version carries
-- its envelope JSON (dsl) and its compiled, hashed artifact.
ALTER TABLE charter.workflow_versions
    ADD CONSTRAINT envelope_is_complete CHECK (
        definition_kind <> 'envelope'
        OR (dsl IS NOT NULL AND compiled IS NOT NULL AND compiled_hash IS NOT NULL));
