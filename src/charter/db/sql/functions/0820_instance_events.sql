-- The engine's side of the events outbox (seed 002 § Outbox Worker Query Contract) and of
-- waits: claiming events, applying them to instances, resuming waits that are due.

-- Takes up to p_limit events to apply (FOR UPDATE SKIP LOCKED → processing with a lease
-- that ends at next_retry_at): pending or failed ones whose time came and processing ones
-- whose worker's lease ended. A document's events are applied in order, so only each
-- document's oldest unfinished event is taken (a dead-lettered one holds the rest back).
-- Each comes with its whole key, org included, which apply_document_events takes back.
-- One org at a time: the claim goes round the orgs with open events (_orgs_in_turn).
CREATE OR REPLACE FUNCTION charter.claim_document_events(p_worker_id text, p_limit integer, p_lease_seconds integer)
RETURNS TABLE (created_at timestamptz, id bigint, org_id text)
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
DECLARE
    v_org     text;
    v_left    integer := p_limit;
    v_claimed integer;
BEGIN
    FOR v_org IN SELECT o.org FROM charter._orgs_in_turn('document_events', NULL, p_limit) AS o(org) LOOP
        EXIT WHEN v_left <= 0;
        RETURN QUERY SELECT * FROM charter._claim_document_events_of_org(
            v_org, p_worker_id, v_left, p_lease_seconds);
        GET DIAGNOSTICS v_claimed = ROW_COUNT;
        v_left := v_left - v_claimed;
        PERFORM charter._took_turn('document_events', v_org);
    END LOOP;
END;
$$;

-- One org's claim of events. PL/pgSQL with no SET clause, so the session keeps its plan: as
-- SQL it was planned over the outbox's partitions on every call (6.6 ms a claim of 100
-- against 5.1 ms, while 100,000 events drained).
CREATE OR REPLACE FUNCTION charter._claim_document_events_of_org(p_org text, p_worker_id text, p_limit integer, p_lease_seconds integer)
RETURNS TABLE (created_at timestamptz, id bigint, org_id text)
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN QUERY
    WITH candidates AS (
        SELECT e.created_at, e.id, e.org_id FROM charter.document_events AS e
         WHERE e.org_id = p_org AND e.status IN ('pending', 'processing', 'failed')
           AND e.next_retry_at <= now()
           -- The document's oldest unfinished event, looked up per candidate (as a NOT
           -- EXISTS, the planner, knowing the org, read all the org's unfinished events
           -- once and compared every candidate with each: 21 ms a claim at 140,000).
           AND e.id = (SELECT b.id FROM charter.document_events AS b
                        WHERE b.org_id = p_org AND b.document_id = e.document_id
                          AND b.status IN ('pending', 'processing', 'failed', 'dead_letter')
                        ORDER BY b.id
                        LIMIT 1)
         ORDER BY e.next_retry_at, e.created_at
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED
    )
    UPDATE charter.document_events AS e
       SET status = 'processing', attempts = e.attempts + 1, worker_id = p_worker_id,
           next_retry_at = now() + make_interval(secs => p_lease_seconds)
      FROM candidates AS c
     WHERE e.created_at = c.created_at AND e.id = c.id AND e.org_id = c.org_id
    RETURNING e.created_at, e.id, e.org_id;
END;
$$;

-- Applies claimed events, each in its own subtransaction: applied → completed; an error
-- → failed and retried after base · 2^(attempt−1) seconds (±25 %), or dead_letter once
-- its attempts are spent. p_verified: the workflow versions whose artifacts the worker
-- verified (WF-07); p_refused: {version id: reason} of those it refused. Each event is named
-- by its key, {created_at, id, org_id} as claim_document_events gave it (without org_id, the
-- org is looked up).
CREATE OR REPLACE FUNCTION charter.apply_document_events(
    p_events jsonb, p_verified text[], p_refused jsonb DEFAULT '{}', p_worker_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- A hot path: plans made once per session and reading by key (docs/architecture.md, Plans).
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
    v_ref     jsonb;
    v_created timestamptz;
    v_id      bigint;
    v_org     text;
    v_event   charter.document_events;
    v_applied integer := 0;
    v_failed  integer := 0;
    v_message text;
BEGIN
    FOR v_ref IN SELECT r FROM jsonb_array_elements(p_events) AS r
                  ORDER BY (r->>'id')::bigint LOOP
        v_created := (v_ref->>'created_at')::timestamptz;
        v_id := (v_ref->>'id')::bigint;
        v_org := coalesce(v_ref->>'org_id', (
            SELECT e.org_id FROM charter.document_events AS e WHERE e.created_at = v_created AND e.id = v_id));
        -- By its whole key and nothing else: the session's plan is made on a small outbox, and
        -- with the status in the query it chose the poll index, (org, next_retry_at,
        -- created_at), and read all of the org's open events to find each one.
        SELECT * INTO v_event FROM charter.document_events AS e
         WHERE e.created_at = v_created AND e.id = v_id AND e.org_id = v_org
         FOR UPDATE;
        -- Its lease ended and another worker took it (or already applied it).
        CONTINUE WHEN NOT FOUND OR v_event.status <> 'processing'
                      OR (p_worker_id IS NOT NULL AND v_event.worker_id IS DISTINCT FROM p_worker_id);
        BEGIN
            PERFORM charter._apply_event(v_event, p_verified, p_refused);
            -- Still processing unless _apply_event held it back for a paused instance.
            UPDATE charter.document_events AS e SET status = 'completed', completed_at = now(), error = NULL
             WHERE e.created_at = v_event.created_at AND e.id = v_event.id AND e.org_id = v_event.org_id
               AND e.status = 'processing';
            IF FOUND THEN
                v_applied := v_applied + 1;
            END IF;
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT;
            UPDATE charter.document_events AS e
               SET status = CASE WHEN e.attempts >= e.max_attempts THEN 'dead_letter' ELSE 'failed' END,
                   error = v_message,
                   next_retry_at = now() + make_interval(secs => 0.5 * power(2, greatest(e.attempts - 1, 0))
                                                              * (0.75 + random() * 0.5))
             WHERE e.created_at = v_event.created_at AND e.id = v_event.id AND e.org_id = v_event.org_id;
            v_failed := v_failed + 1;
        END;
    END LOOP;
    RETURN jsonb_build_object('applied', v_applied, 'failed', v_failed);
END;
$$;

-- The compiled workflow of a version, refused unless the worker verified it (WF-07).
CREATE OR REPLACE FUNCTION charter._verified_workflow(p_version_id text, p_verified text[], p_refused jsonb)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_refused ? p_version_id THEN
        RAISE EXCEPTION USING ERRCODE = 'CH048',
            MESSAGE = format('Workflow version %s was refused: %s', p_version_id, p_refused->>p_version_id),
            HINT = 'Recompile it as the schema''s owner (charter recompile), then retry the dead letters.';
    END IF;
    IF NOT (p_version_id = ANY (coalesce(p_verified, '{}'))) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH048',
            MESSAGE = format('Workflow version %s has not been verified by this worker yet', p_version_id),
            HINT = 'The worker verifies new versions as it sees them; the event is retried.';
    END IF;
    RETURN (SELECT v.compiled FROM charter.workflow_versions AS v WHERE v.id = p_version_id);
END;
$$;

-- The workflow a new instance follows: the org's current effective workflow for the entity
-- type when it is compiled on the document's contract (envelope version), else the org's
-- newest published one on that version (the org rebased after the document was written),
-- else the bare envelope of the document's contract. A document and its instance are always
-- on one envelope version.
CREATE OR REPLACE FUNCTION charter._instance_version(p_org_id text, p_document charter.documents)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_version text;
    v_current jsonb;
BEGIN
    v_version := coalesce(
        (SELECT v.id FROM charter.workflows AS w
           JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
           JOIN charter.workflow_versions AS c ON c.id = p_document.contract_version_id
          WHERE w.slug = format('effective:%s:%s', p_org_id, p_document.entity_type)
            AND (v.base_ref->>'envelopeVersion')::numeric = (c.contract->>'version')::numeric),
        (SELECT v.id FROM charter.workflow_versions AS v
           JOIN charter.workflow_versions AS c ON c.id = p_document.contract_version_id
          WHERE v.workflow_slug = format('effective:%s:%s', p_org_id, p_document.entity_type)
            AND v.status = 'published'
            AND (v.base_ref->>'envelopeVersion')::numeric = (c.contract->>'version')::numeric
          ORDER BY v.version DESC LIMIT 1));
    IF v_version IS NOT NULL THEN
        RETURN v_version;
    END IF;
    -- The org's own steps (its approvals among them) are on another contract version: the
    -- bare envelope would let users pass the gates its body guards, so refuse instead.
    SELECT v.base_ref INTO v_current FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = format('effective:%s:%s', p_org_id, p_document.entity_type);
    IF v_current IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH040',
            MESSAGE = format('Org %L runs %s on envelope version %s, but document %L follows contract version %s, for which the org has no workflow',
                             p_org_id, p_document.entity_type, v_current->>'envelopeVersion', p_document.id,
                             (SELECT c.contract->>'version' FROM charter.workflow_versions AS c WHERE c.id = p_document.contract_version_id)),
            HINT = format('Publish the org''s definition on that version, or rebase it (client.definitions.rebase(%L)).', p_document.entity_type);
    END IF;
    RETURN p_document.contract_version_id;
END;
$$;

-- Starts a document's instance: a run of the execution core with a readiness row per node,
-- pinned to the workflow version and to the document version of its on_create event.
CREATE OR REPLACE FUNCTION charter._start_instance(
    p_document charter.documents, p_event charter.document_events, p_verified text[], p_refused jsonb)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_version  charter.workflow_versions;
    v_wf       jsonb;
    v_run      text := gen_random_uuid()::text;
    v_instance charter.workflow_instances;
    v_actor    text := p_event.payload->>'actor';
BEGIN
    SELECT * INTO v_version FROM charter.workflow_versions AS v WHERE v.id = charter._instance_version(p_document.org_id, p_document);
    v_wf := charter._verified_workflow(v_version.id, p_verified, p_refused);
    INSERT INTO charter.runs (id, org_id, workflow_slug, version_id, input)
    VALUES (v_run, p_document.org_id, v_version.workflow_slug, v_version.id,
            jsonb_build_object('documentId', p_document.id, 'entityType', p_document.entity_type));
    INSERT INTO charter.workflow_instances (id, org_id, entity_type, document_id, version_id, document_version,
                                            actor, trace_id)
    VALUES (v_run, p_document.org_id, p_document.entity_type, p_document.id, v_version.id, p_event.entity_version,
            CASE WHEN v_actor = 'system' OR v_actor LIKE 'service:%' THEN NULL ELSE v_actor END, p_event.trace_id)
    RETURNING * INTO v_instance;
    INSERT INTO charter.step_states (run_id, step_slug, org_id, required)
    SELECT v_run, n.key, p_document.org_id,
           coalesce((v_wf #>> ARRAY['joinRequirements', n.key, 'requiredTokenCount'])::integer, 1)
      FROM jsonb_each(v_wf->'nodes') AS n;
    PERFORM charter._arrive(v_instance, v_wf, 'sys:start', 't1', false, NULL, false);
    RETURN v_run;
END;
$$;

-- Applies one event to its document's instance under the document's lock (WF-01): on_create
-- starts the instance (unless the document was amended meanwhile); an event the instance already reflects (its own changes) changes
-- nothing; a user's transition moves the token through the gate; an edit in a stable region
-- is version drift (WF-05). Then every ready node runs. An event for a paused instance is
-- held: back to pending, due at infinity, its attempt given back — and, the oldest of its
-- document, it holds the later ones back too — until resume (or the instance's end) lets
-- it go (_release_held_events).
CREATE OR REPLACE FUNCTION charter._apply_event(p_event charter.document_events, p_verified text[], p_refused jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_document charter.documents;
    v_instance charter.workflow_instances;
    v_wf       jsonb;
    v_actor    text := p_event.payload->>'actor';
    v_run      text;
BEGIN
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', p_event.org_id || '/' || p_event.document_id));
    SELECT * INTO v_document FROM charter.documents AS d
     WHERE d.org_id = p_event.org_id AND d.id = p_event.document_id FOR UPDATE;
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.org_id = p_event.org_id AND i.document_id = p_event.document_id AND i.status IN ('running', 'paused');
    IF p_event.event_type = 'on_create' THEN
        -- A document amended before its instance began never gets one: its amendment runs.
        IF v_instance.id IS NULL AND v_document.amended_by IS NULL AND NOT EXISTS (
                SELECT 1 FROM charter.workflow_instances AS i
                 WHERE i.org_id = p_event.org_id AND i.entity_type = p_event.entity_type
                   AND i.document_id = p_event.document_id) THEN
            v_run := charter._start_instance(v_document, p_event, p_verified, p_refused);
            PERFORM charter._drain(v_run, p_event.org_id);
        END IF;
        RETURN;
    END IF;
    IF v_instance.id IS NULL OR p_event.entity_version <= v_instance.document_version
       OR p_event.event_type = 'on_amended' THEN
        RETURN;
    END IF;
    IF v_instance.status = 'paused' THEN
        UPDATE charter.document_events AS e
           SET status = 'pending', attempts = greatest(e.attempts - 1, 0), worker_id = NULL,
               next_retry_at = 'infinity', error = format('held: workflow instance %s is paused', v_instance.id)
         WHERE e.created_at = p_event.created_at AND e.id = p_event.id AND e.org_id = p_event.org_id;
        RETURN;
    END IF;
    v_wf := charter._verified_workflow(v_instance.version_id, p_verified, p_refused);
    IF p_event.event_type = 'on_lifecycle_transition' THEN
        UPDATE charter.workflow_instances AS i
           SET document_version = p_event.entity_version,
               actor = CASE WHEN v_actor = 'system' OR v_actor LIKE 'service:%' THEN i.actor ELSE v_actor END
         WHERE i.id = v_instance.id AND i.org_id = v_instance.org_id RETURNING * INTO v_instance;
        PERFORM charter._user_transition(v_instance, v_wf, p_event);
    ELSE
        PERFORM charter._version_drift(v_instance, v_wf, v_document, p_event);
    END IF;
    PERFORM charter._drain(v_instance.id, v_instance.org_id);
END;
$$;

-- A user's transition (or one made before the instance could see it): the token must be at
-- the state the document left; the gate is recorded as passed by that user.
CREATE OR REPLACE FUNCTION charter._user_transition(p_instance charter.workflow_instances, p_wf jsonb, p_event charter.document_events)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_from   text := p_event.payload->>'from';
    v_gate   text := 'sys:gate:' || (p_event.payload->>'gate');
    v_status text;
    v_document charter.documents;
BEGIN
    SELECT s.status INTO v_status FROM charter.step_states AS s
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = 'sys:state:' || v_from;
    IF v_status IS DISTINCT FROM 'running' AND v_status IS DISTINCT FROM 'ready' THEN
        PERFORM charter._fail_node(p_instance, p_wf, 'sys:state:' || v_from, jsonb_build_object(
            'sqlstate', 'CH043',
            'message', format('The document went from %s through %s, but the instance was not at state %s (at %s)',
                              v_from, p_event.payload->>'gate', v_from, coalesce(array_to_string(p_instance.current_nodes, ', '), 'nothing')),
            'node', 'sys:state:' || v_from));
        RETURN;
    END IF;
    SELECT * INTO v_document FROM charter.documents AS d WHERE d.org_id = p_instance.org_id AND d.id = p_instance.document_id;
    PERFORM charter._pass_gate(p_instance, p_wf, v_document, v_gate, jsonb_build_object(
        'from', v_from, 'to', p_event.payload->>'to', 'label', p_event.payload->'label',
        'actor', p_event.payload->>'actor'));
END;
$$;

-- WF-05: the document changed under the instance. Outside a stable region the instance
-- simply goes on with the new version. Inside one (or in a body that holds an approval
-- node, or with the token at a gate such a body leads to, not passed yet): the amendment branch when the contract
-- has one from the document's state (a gate named amend, or a transition to a state named
-- amended), passed by the workflow; otherwise the region's body restarts from its entry on
-- the new version (its pending work voided with evidence, so approvals are asked again).
-- Where work of the region can no longer be withdrawn — a side effect already handed to
-- delivery, or a handler task a worker already took — the instance fails with
-- WORKFLOW_VERSION_DRIFT.
CREATE OR REPLACE FUNCTION charter._version_drift(
    p_instance charter.workflow_instances, p_wf jsonb, p_document charter.documents, p_event charter.document_events)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_actor    text := p_event.payload->>'actor';
    v_old      integer := p_instance.document_version;
    v_region   text[];
    v_amend    jsonb;
    v_slot     record;
    v_reason   jsonb;
    v_epoch    integer;
BEGIN
    UPDATE charter.workflow_instances AS i
       SET document_version = p_event.entity_version,
           actor = CASE WHEN v_actor = 'system' OR v_actor LIKE 'service:%' THEN i.actor ELSE v_actor END
     WHERE i.id = p_instance.id AND i.org_id = p_instance.org_id RETURNING * INTO p_instance;
    SELECT array_agg(s.step_slug ORDER BY s.step_slug) INTO v_region FROM charter.step_states AS s
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.status IN ('ready', 'running')
       AND (((p_wf->'stableRegionNodes' ? s.step_slug OR p_wf #>> ARRAY['nodes', s.step_slug, 'type'] = 'approval'
              OR charter._slot_asks_again(p_wf, p_wf #>> ARRAY['slotMap', s.step_slug]))
             AND p_wf #>> ARRAY['nodes', s.step_slug, 'type'] NOT IN ('lifecycle_state', 'lifecycle_gate'))
            -- A gate its body reached and the workflow has not passed yet (WF-03): the body's
            -- approvals were given on the old version, so the edit routes as one during it.
            OR (s.status = 'ready' AND p_wf #>> ARRAY['nodes', s.step_slug, 'type'] = 'lifecycle_gate'
                AND EXISTS (SELECT 1 FROM unnest(charter._body_slots(p_wf, s.step_slug)) AS b(slot)
                             WHERE charter._slot_asks_again(p_wf, b.slot))));
    IF v_region IS NULL THEN
        RETURN;
    END IF;
    v_reason := jsonb_build_object('reason', 'version drift', 'drift',
        jsonb_build_object('from', v_old, 'to', p_event.entity_version, 'event', p_event.event_type));
    SELECT t INTO v_amend FROM charter.workflow_versions AS c, jsonb_array_elements(c.contract->'transitions') AS t
     WHERE c.id = p_document.contract_version_id AND t->>'from' = p_document.state
       AND (t->>'gate' = 'amend' OR t->>'to' = 'amended')
     LIMIT 1;
    IF v_amend IS NOT NULL THEN
        PERFORM charter._cancel_active(p_instance, p_wf, ARRAY['sys:state:' || p_document.state], v_reason);
        UPDATE charter.step_states AS s SET outcome = v_amend->>'to'
         WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = 'sys:gate:' || (v_amend->>'gate');
        PERFORM charter._pass_gate(p_instance, p_wf, p_document, 'sys:gate:' || (v_amend->>'gate'), NULL);
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM charter.instance_waits AS w
                WHERE w.run_id = p_instance.id AND w.org_id = p_instance.org_id AND w.node_id = ANY (v_region)
                  AND ((w.kind = 'handler' AND w.worker_id IS NOT NULL)
                       OR (w.kind = 'delivery' AND EXISTS (
                               SELECT 1 FROM charter.side_effects AS x
                                WHERE x.run_id = w.run_id AND x.org_id = w.org_id AND x.node_id = w.node_id
                                  AND x.status IN ('processing', 'completed'))))) THEN
        PERFORM charter._fail_node(p_instance, p_wf, v_region[1], jsonb_build_object(
            'sqlstate', 'CH043', 'node', v_region[1],
            'message', format('Document %s changed (version %s → %s) while the stable region at %s had work that cannot be withdrawn',
                              p_document.id, v_old, p_event.entity_version, array_to_string(v_region, ', ')),
            'hint', 'Give the contract an amendment branch (a gate named amend from this state), or keep edits out of the region.'));
        RETURN;
    END IF;
    -- Restart each affected slot's body from its entry, as a new round on the new version.
    PERFORM charter._cancel_active(p_instance, p_wf, ARRAY(
        SELECT s.step_slug FROM charter.step_states AS s
         WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND NOT (s.step_slug = ANY (v_region))), v_reason);
    UPDATE charter.workflow_instances AS i SET epoch = i.epoch + 1 WHERE i.id = p_instance.id AND i.org_id = p_instance.org_id
    RETURNING * INTO p_instance;
    FOR v_slot IN SELECT DISTINCT 'sys:slot:' || b.slot || ':in' AS slot_in
                    FROM unnest(v_region) AS n
                   CROSS JOIN LATERAL unnest(CASE WHEN p_wf #>> ARRAY['nodes', n, 'type'] = 'lifecycle_gate'
                                                  THEN charter._body_slots(p_wf, n)
                                                  ELSE ARRAY[p_wf #>> ARRAY['slotMap', n]] END) AS b(slot)
                   WHERE b.slot <> 'envelope' LOOP
        CONTINUE WHEN NOT (p_wf->'nodes' ? v_slot.slot_in);
        UPDATE charter.step_states AS s
           SET status = 'waiting', arrivals = 0, skipped_arrivals = 0, token = NULL, outcome = NULL,
               ready_at = NULL, completed_at = NULL
         WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = ANY (charter._reachable(p_wf, v_slot.slot_in))
           AND p_wf #>> ARRAY['nodes', s.step_slug, 'type'] NOT IN ('lifecycle_state', 'end');
        PERFORM charter._node_evidence(p_instance, '$instance', 'restart', 't' || p_instance.epoch, 'completed',
            jsonb_build_object('restart', v_slot.slot_in, 'epoch', p_instance.epoch) || v_reason, NULL, v_actor);
        PERFORM charter._arrive(p_instance, p_wf, v_slot.slot_in, 't' || p_instance.epoch, false, NULL, false);
    END LOOP;
END;
$$;
