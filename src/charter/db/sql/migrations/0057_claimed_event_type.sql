-- A claimed document event's key becomes a composite type (types/0110_claimed_event.sql),
-- so that the claim of every queue goes round the orgs through one loop, _claim_in_turn,
-- which returns a set of its queue's row type. Same columns in the same order as the former
-- RETURNS TABLE, so callers see no change. A function's return type cannot be replaced, so
-- the two are dropped here; their function files create them again in this same
-- transaction, and the grants file grants them again.
CREATE TYPE charter.claimed_event AS (
    created_at timestamptz,
    id bigint,
    org_id text
);

DROP FUNCTION IF EXISTS charter.claim_document_events(text, integer, integer);
DROP FUNCTION IF EXISTS charter._claim_document_events_of_org(text, text, integer, integer);
