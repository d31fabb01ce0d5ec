-- The idempotency key of one task of a step (WF-02): stable across attempts, so a handler can
-- hand it to the outside world, and the key of its completion receipt. A run is named by
-- its org and its id, so a run of another org than 'default' hashes all four as a JSON
-- array: two orgs' runs of one id never share a key with a system both call, and no run id
-- can spell another's key (the default org's text ends in a number, a JSON array in ']').
-- A SQL-standard body, no SET clause and STABLE (as convert_to is): PostgreSQL inlines it
-- where it is used instead of calling it.
CREATE OR REPLACE FUNCTION charter._idempotency_key(
    p_run_id text, p_org_id text, p_step_slug text, p_task_index integer)
RETURNS text
LANGUAGE sql
STABLE
PARALLEL SAFE
RETURN encode(sha256(convert_to(
    CASE WHEN p_org_id = 'default' THEN p_run_id || ':' || p_step_slug || ':' || p_task_index
         ELSE jsonb_build_array(p_org_id, p_run_id, p_step_slug, p_task_index)::text END,
    'UTF8')), 'hex');
