-- A claimed document event: what claim_document_events hands the documents engine for each
-- event it claimed, the event's whole key, org included, which apply_document_events takes
-- back.
CREATE TYPE charter.claimed_event AS (
    created_at timestamptz,
    id bigint,
    org_id text
);
