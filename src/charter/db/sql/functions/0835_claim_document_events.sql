-- The engine's side of the events outbox (seed 002 § Outbox Worker Query Contract) and of
-- waits: claiming events, applying them to instances, resuming waits that are due.

-- Takes up to p_limit events to apply (FOR UPDATE SKIP LOCKED → processing with a lease
-- that ends at next_retry_at): pending or failed ones whose time came and processing ones
-- whose worker's lease ended. A document's events are applied in order, so only each
-- document's oldest unfinished event is taken (a dead-lettered one holds the rest back).
-- Each comes with its whole key, org included, which apply_document_events takes back.
-- One org at a time: the claim goes round the orgs with open events (_orgs_in_turn).
CREATE OR REPLACE FUNCTION charter.claim_document_events(p_worker_id text, p_limit integer, p_lease_seconds integer)
RETURNS SETOF charter.claimed_event
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- Plans made once per session and reading by key (docs/architecture.md, Plans); the helpers
-- run with these settings. The claimed events are updated by key, one by one: a hash or
-- merge join would read the whole outbox to update the few claimed (the planner cannot know
-- how few LIMIT keeps).
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
BEGIN
    RETURN QUERY SELECT * FROM charter._claim_in_turn(NULL::charter.claimed_event, 'document_events',
                                                       p_worker_id, NULL, p_limit, p_lease_seconds);
END;
$$;
