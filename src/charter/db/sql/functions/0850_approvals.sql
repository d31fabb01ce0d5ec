-- Approvals bound to a version (seed 002 WF-03, § Composable Approval Chains): resolving
-- approvers once, deciding, consuming at the gate, voiding on change, and the reads
-- (inbox, a request, its snapshot and diff, a document's approval history).

-- The approvers of an inline approval node, resolved once when its token arrives: users,
-- everyone with a role in the org's directory, the user ids a rule yields, the manager of the
-- user who drove the instance. Nobody → APPROVERS_EMPTY naming the rule.
CREATE OR REPLACE FUNCTION charter._resolve_approvers(
    p_instance charter.workflow_instances, p_node text, p_config jsonb, p_vars jsonb)
RETURNS text[]
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_rule   jsonb;
    v_result jsonb;
    v_found  text[] := '{}';
BEGIN
    FOR v_rule IN SELECT a FROM jsonb_array_elements(coalesce(p_config->'approvers', '[]'::jsonb)) AS a LOOP
        IF v_rule ? 'user' THEN
            v_found := v_found || ARRAY(SELECT u.user_id FROM charter.directory_users AS u
                                         WHERE u.org_id = p_instance.org_id AND u.user_id = v_rule->>'user');
        ELSIF v_rule ? 'role' THEN
            v_found := v_found || ARRAY(SELECT u.user_id FROM charter.directory_users AS u
                                         WHERE u.org_id = p_instance.org_id AND v_rule->>'role' = ANY (u.roles));
        ELSIF v_rule ? 'rule' THEN
            v_result := charter.eval_expr(v_rule->'rule', p_vars)->'result';
            v_found := v_found || ARRAY(
                SELECT u.user_id FROM charter.directory_users AS u
                 WHERE u.org_id = p_instance.org_id
                   AND u.user_id IN (SELECT x FROM jsonb_array_elements_text(
                        CASE jsonb_typeof(v_result) WHEN 'array' THEN v_result
                             WHEN 'string' THEN jsonb_build_array(v_result) ELSE '[]'::jsonb END) AS x));
        ELSIF v_rule ? 'managerOf' THEN
            v_found := v_found || ARRAY(SELECT u.manager_id FROM charter.directory_users AS u
                                         WHERE u.org_id = p_instance.org_id AND u.user_id = p_instance.actor
                                           AND u.manager_id IS NOT NULL);
        END IF;
    END LOOP;
    v_found := ARRAY(SELECT DISTINCT x FROM unnest(v_found) AS x ORDER BY x);
    IF cardinality(v_found) = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH051',
            MESSAGE = format('The approvers of %s resolve to nobody: %s', p_node, p_config->'approvers'),
            HINT = 'Give someone the role in the directory, or fix the rule so it names a user of the org.';
    END IF;
    RETURN v_found;
END;
$$;

-- A request's outcome from its decisions: rejected as soon as anyone rejects; approved when
-- one approves (any) or when every approver has decided and at least one approved with no
-- rejection (all; abstentions count as neither); else still pending.
CREATE OR REPLACE FUNCTION charter._request_outcome(p_request charter.approval_requests)
RETURNS text
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT CASE
        WHEN bool_or(d.decision = 'rejected') THEN 'rejected'
        WHEN p_request.decision = 'any' AND bool_or(d.decision = 'approved') THEN 'approved'
        WHEN p_request.decision = 'all' AND count(*) = cardinality(p_request.approvers)
             AND bool_or(d.decision = 'approved') THEN 'approved'
        WHEN p_request.decision = 'all' AND count(*) = cardinality(p_request.approvers) THEN 'rejected'
        ELSE 'pending' END
      FROM charter.approval_decisions AS d
     WHERE d.request_id = p_request.id AND d.org_id = p_request.org_id AND d.voided_at IS NULL
$$;

-- client.approvals.decide: one decision of one approver on the exact version the request is
-- pinned to. Refused (and nothing written) when the request is unknown, closed, the actor is
-- not its approver, is its requester or someone else segregation of duties leaves out
-- (_approval_exclusions), decided already, or the version is not the pinned one or the
-- document moved on. Under the document's lock, so concurrent decisions serialize and
-- the request closes once.
CREATE OR REPLACE FUNCTION charter.decide_approval(
    p_org_id text, p_request_id text, p_decision text, p_actor text, p_entity_version integer,
    p_comment text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_request  charter.approval_requests;
    v_version  integer;
    v_outcome  text;
    v_decision charter.approval_decisions;
    v_instance charter.workflow_instances;
    v_document charter.documents;
    v_next     charter.approval_requests;
    v_excluded jsonb;
    v_stage    integer;
    v_message  text;
    v_hint     text;
    v_error    jsonb;
BEGIN
    IF p_decision IS NULL OR p_decision NOT IN ('approved', 'rejected', 'abstained') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH057',
            MESSAGE = format('%L is not a decision', p_decision),
            HINT = 'Decide approved, rejected or abstained.';
    END IF;
    SELECT * INTO v_request FROM charter.approval_requests AS r WHERE r.org_id = v_org AND r.id = p_request_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH057',
            MESSAGE = format('Approval request %L does not exist in org %L', p_request_id, v_org),
            HINT = 'Take request ids from client.approvals.inbox(user).';
    END IF;
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_org || '/' || v_request.document_id));
    SELECT * INTO v_request FROM charter.approval_requests AS r
     WHERE r.id = p_request_id AND r.org_id = v_org FOR UPDATE;
    IF v_request.status IN ('approved', 'rejected', 'cancelled') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH055',
            MESSAGE = format('Approval request %L is %s', p_request_id, v_request.status),
            HINT = 'Decide the request that is pending now (client.approvals.inbox).';
    END IF;
    SELECT d.version INTO v_version FROM charter.documents AS d
     WHERE d.org_id = v_org AND d.id = v_request.document_id;
    IF p_entity_version IS DISTINCT FROM v_request.entity_version OR v_version <> v_request.entity_version THEN
        RAISE EXCEPTION USING ERRCODE = 'CH052',
            MESSAGE = format('Request %L is for version %s of document %L%s, not %s', p_request_id,
                             v_request.entity_version, v_request.document_id,
                             CASE WHEN v_version <> v_request.entity_version
                                  THEN format(', which is at version %s now', v_version) ELSE '' END,
                             coalesce(p_entity_version::text, 'no version')),
            HINT = 'Look at the version the request is pinned to (client.approvals.snapshot) and decide that one.';
    END IF;
    IF v_request.status <> 'pending' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH055',
            MESSAGE = format('Approval request %L is %s%s', p_request_id, v_request.status,
                             coalesce(format(' (by version %s)', v_request.voided_version), '')),
            HINT = 'Decide the request that is pending now (client.approvals.inbox).';
    END IF;
    IF p_actor = v_request.requester THEN
        RAISE EXCEPTION USING ERRCODE = 'CH056',
            MESSAGE = format('%s asked for this approval and may not approve it', p_actor),
            HINT = 'Another approver decides.';
    END IF;
    -- The second line of defence: whoever segregation of duties leaves out of this request now
    -- (an author of the changes it covers, an earlier stage's decider) may not decide it, even
    -- were they among its approvers.
    v_excluded := charter._approval_exclusions(v_org, v_request.document_id, v_request.entity_version,
        v_request.requester, v_request.run_id, v_request.node_id, v_request.token, v_request.config);
    IF v_excluded ? p_actor THEN
        RAISE EXCEPTION USING ERRCODE = 'CH070',
            MESSAGE = CASE WHEN v_excluded->>p_actor LIKE 'decided%'
                THEN format('%s %s of chain %s and may not decide stage %s of it too (request %L)', p_actor,
                            v_excluded->>p_actor, v_request.config->>'chainId', (v_request.config->>'stage')::integer + 1,
                            p_request_id)
                ELSE format('%s %s of document %L, a change since its last approved version, and may not approve it (request %L)',
                            p_actor, v_excluded->>p_actor, v_request.document_id, p_request_id) END,
            HINT = CASE WHEN v_excluded->>p_actor LIKE 'decided%'
                THEN 'Another approver decides; a chain defined with allowSameApprover lets one person decide several stages.'
                ELSE 'Another approver decides: nobody approves their own changes.' END;
    END IF;
    IF NOT (p_actor = ANY (v_request.approvers)) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH053',
            MESSAGE = format('%L is not an approver of request %L (its approvers: %s)', p_actor, p_request_id,
                             array_to_string(v_request.approvers, ', ')),
            HINT = 'The approvers were fixed when the request was made.';
    END IF;
    IF EXISTS (SELECT 1 FROM charter.approval_decisions AS d
                WHERE d.request_id = p_request_id AND d.org_id = v_org AND d.actor = p_actor) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH054',
            MESSAGE = format('%s already decided request %L', p_actor, p_request_id),
            HINT = 'A decision is final; a new version of the document asks again.';
    END IF;
    INSERT INTO charter.approval_decisions (org_id, request_id, document_id, actor, decision, entity_version, comment)
    VALUES (v_org, p_request_id, v_request.document_id, p_actor, p_decision, p_entity_version, p_comment)
    RETURNING * INTO v_decision;
    v_outcome := charter._request_outcome(v_request);
    IF v_outcome <> 'pending' THEN
        UPDATE charter.approval_requests SET status = v_outcome, closed_at = now(),
               outcome_reason = CASE WHEN v_outcome = 'rejected' THEN coalesce(p_comment, 'rejected') END
         WHERE id = p_request_id AND org_id = v_org;
    END IF;
    IF v_outcome = 'approved' AND v_request.config ? 'stages'
       AND (v_request.config->>'stage')::integer + 1 < jsonb_array_length(v_request.config->'stages') THEN
        -- A chain: the next stage asks its approvers, on the same version; its escalation
        -- deadline counts from now, when it opens.
        v_stage := (v_request.config->>'stage')::integer + 1;
        SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = v_request.run_id AND i.org_id = v_request.org_id;
        SELECT * INTO v_document FROM charter.documents AS d WHERE d.org_id = v_org AND d.id = v_request.document_id;
        BEGIN
            v_next := charter._open_request(v_instance, v_document, v_request.node_id, v_request.token,
                (v_request.config->'stages'->v_stage)
                  || (v_request.config - '{approvers,decision}'::text[])
                  || jsonb_build_object('stage', v_stage),
                charter._instance_vars(v_instance, v_document));
        EXCEPTION WHEN SQLSTATE 'CH051' THEN
            -- Nobody may decide the next stage: the decision stands, and the instance fails at
            -- once with APPROVERS_EMPTY (the worker resumes the wait with the error).
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_hint = PG_EXCEPTION_HINT;
            v_error := jsonb_build_object('code', 'APPROVERS_EMPTY', 'sqlstate', 'CH051', 'message', v_message,
                                          'hint', v_hint, 'node', v_request.node_id, 'stage', v_stage);
            UPDATE charter.instance_waits AS w
               SET resume = jsonb_build_object('error', v_error), due_at = now()
             WHERE w.run_id = v_request.run_id AND w.org_id = v_request.org_id AND w.node_id = v_request.node_id
               AND w.kind = 'approval';
            PERFORM pg_notify('charter_events', v_org);
            RETURN jsonb_build_object('decisionId', v_decision.id, 'requestId', p_request_id, 'decision', p_decision,
                                      'requestStatus', v_outcome, 'entityVersion', p_entity_version, 'error', v_error);
        END;
        UPDATE charter.instance_waits AS w
           SET detail = (w.detail - 'escalated')
                        || jsonb_build_object('requestId', v_next.id, 'stage', v_stage, 'approvers', to_jsonb(v_next.approvers)),
               due_at = charter._now(v_request.org_id) + (w.detail->>'escalateAfter')::interval
         WHERE w.run_id = v_request.run_id AND w.org_id = v_request.org_id AND w.node_id = v_request.node_id AND w.kind = 'approval';
        RETURN jsonb_build_object('decisionId', v_decision.id, 'requestId', p_request_id, 'decision', p_decision,
                                  'requestStatus', v_outcome, 'entityVersion', p_entity_version, 'nextRequestId', v_next.id);
    END IF;
    IF v_outcome <> 'pending' THEN
        UPDATE charter.instance_waits AS w
           SET resume = jsonb_build_object('outcome', v_outcome, 'requestId', p_request_id,
                   'actor', p_actor, 'reason', p_comment,
                   'decisions', (SELECT jsonb_agg(jsonb_build_object('id', d.id, 'requestId', d.request_id,
                                                                    'actor', d.actor, 'decision', d.decision,
                                                                    'entityVersion', d.entity_version, 'comment', d.comment)
                                                  ORDER BY d.id)
                                   FROM charter.approval_decisions AS d
                                   JOIN charter.approval_requests AS r ON r.id = d.request_id AND d.org_id = r.org_id
                                  WHERE r.run_id = v_request.run_id AND r.org_id = v_request.org_id AND r.node_id = v_request.node_id
                                    AND r.token = v_request.token AND d.voided_at IS NULL)),
               due_at = now()
         WHERE w.run_id = v_request.run_id AND w.org_id = v_request.org_id AND w.node_id = v_request.node_id AND w.kind = 'approval';
        PERFORM pg_notify('charter_events', v_org);
    END IF;
    RETURN jsonb_build_object('decisionId', v_decision.id, 'requestId', p_request_id, 'decision', p_decision,
                              'requestStatus', v_outcome, 'entityVersion', p_entity_version);
END;
$$;

-- WF-03 at the gate: the approved, unapplied decisions of the instance's requests in this
-- round are consumed (applied) by the gate in the same transaction, each checked against
-- the document's current version; a stale one refuses the pass. Returns their ids.
CREATE OR REPLACE FUNCTION charter._consume_approvals(
    p_instance charter.workflow_instances, p_document charter.documents, p_gate text)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_stale   charter.approval_decisions;
    v_applied jsonb;
BEGIN
    SELECT d.* INTO v_stale FROM charter.approval_decisions AS d
      JOIN charter.approval_requests AS r ON r.id = d.request_id AND d.org_id = r.org_id
     WHERE r.run_id = p_instance.id AND r.org_id = p_instance.org_id AND r.status = 'approved' AND d.decision = 'approved'
       AND d.applied_at IS NULL AND d.voided_at IS NULL AND d.entity_version <> p_document.version
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH052',
            MESSAGE = format('Gate %s would pass on %s''s approval of version %s, but document %L is at version %s',
                             p_gate, v_stale.actor, v_stale.entity_version, p_document.id, p_document.version),
            HINT = 'An approval is valid only for the version approved; the document must be approved again.';
    END IF;
    WITH applied AS (
        UPDATE charter.approval_decisions AS d SET applied_at = now(), applied_by = p_gate
          FROM charter.approval_requests AS r
         WHERE r.id = d.request_id AND d.org_id = r.org_id AND r.run_id = p_instance.id AND r.org_id = p_instance.org_id AND r.status = 'approved'
           AND d.decision = 'approved' AND d.applied_at IS NULL AND d.voided_at IS NULL
        RETURNING d.id
    )
    SELECT coalesce(jsonb_agg(id ORDER BY id), '[]'::jsonb) INTO v_applied FROM applied;
    RETURN v_applied;
END;
$$;

CREATE OR REPLACE FUNCTION charter._request_json(p_request charter.approval_requests)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'id', p_request.id, 'documentId', p_request.document_id, 'runId', p_request.run_id,
        'node', p_request.node_id, 'status', p_request.status, 'entityVersion', p_request.entity_version,
        'snapshotVersion', p_request.snapshot_version, 'approvers', to_jsonb(p_request.approvers),
        'decision', p_request.decision, 'requester', p_request.requester, 'since', p_request.created_at,
        'closedAt', p_request.closed_at, 'reason', p_request.outcome_reason,
        'voidedVersion', p_request.voided_version, 'delegated', p_request.delegated,
        'escalatedAt', p_request.escalated_at, 'excluded', p_request.excluded,
        'entityType', (SELECT d.entity_type FROM charter.documents AS d
                        WHERE d.org_id = p_request.org_id AND d.id = p_request.document_id),
        'decisions', coalesce((SELECT jsonb_agg(jsonb_build_object(
                         'id', d.id, 'actor', d.actor, 'decision', d.decision, 'entityVersion', d.entity_version,
                         'comment', d.comment, 'decidedAt', d.decided_at, 'appliedAt', d.applied_at,
                         'appliedBy', d.applied_by, 'voidedAt', d.voided_at, 'voidedVersion', d.voided_version)
                         ORDER BY d.id)
                     FROM charter.approval_decisions AS d
                    WHERE d.request_id = p_request.id AND d.org_id = p_request.org_id), '[]'::jsonb))
$$;

CREATE OR REPLACE FUNCTION charter.approval_inbox(p_org_id text, p_user text)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT charter._request_json(r) FROM charter.approval_requests AS r
     WHERE r.org_id = charter._acting_org(p_org_id) AND r.status = 'pending' AND p_user = ANY (r.approvers)
       AND NOT EXISTS (SELECT 1 FROM charter.approval_decisions AS d WHERE d.request_id = r.id AND d.org_id = r.org_id AND d.actor = p_user)
     ORDER BY r.created_at, r.id
$$;

CREATE OR REPLACE FUNCTION charter.get_approval(p_org_id text, p_request_id text, p_part text DEFAULT 'request')
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_request  charter.approval_requests;
    v_pinned   charter.document_versions;
    v_previous charter.document_versions;
BEGIN
    SELECT * INTO v_request FROM charter.approval_requests AS r WHERE r.org_id = v_org AND r.id = p_request_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH057',
            MESSAGE = format('Approval request %L does not exist in org %L', p_request_id, v_org),
            HINT = 'Take request ids from client.approvals.inbox(user).';
    END IF;
    IF p_part = 'request' THEN
        RETURN charter._request_json(v_request);
    END IF;
    SELECT * INTO v_pinned FROM charter.document_versions AS v
     WHERE v.org_id = v_org AND v.document_id = v_request.document_id AND v.version = v_request.snapshot_version;
    IF p_part = 'snapshot' THEN
        RETURN jsonb_build_object('documentId', v_pinned.document_id, 'version', v_pinned.version,
                                  'state', v_pinned.state, 'data', v_pinned.data, 'at', v_pinned.created_at);
    END IF;
    -- The diff: against the version the last applied approval of this document was for, else
    -- the document's first version.
    SELECT * INTO v_previous FROM charter.document_versions AS v
     WHERE v.org_id = v_org AND v.document_id = v_request.document_id
       AND v.version = coalesce((SELECT max(d.entity_version) FROM charter.approval_decisions AS d
                                  WHERE d.org_id = v_org AND d.document_id = v_request.document_id
                                    AND d.applied_at IS NOT NULL AND d.entity_version < v_pinned.version), 1);
    RETURN jsonb_build_object('documentId', v_pinned.document_id, 'from', v_previous.version, 'to', v_pinned.version,
                              'changes', charter._field_changes(v_previous.data, v_pinned.data));
END;
$$;

CREATE OR REPLACE FUNCTION charter.approval_history(p_org_id text, p_document_id text)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT charter._request_json(r) FROM charter.approval_requests AS r
     WHERE r.org_id = charter._acting_org(p_org_id) AND r.document_id = p_document_id
     ORDER BY r.created_at, r.id
$$;

-- client.approvals.define_chain: a new version of the org's chain (unchanged when the stages
-- and the option are the latest version's). Each stage: {"approvers": [...], "decision":
-- "any" | "all"}; each approver one of {"user": ID}, {"role": NAME}, {"rule": EXPR},
-- {"managerOf": "requester"}. p_allow_same_approver (allowSameApprover) lets one person
-- decide several stages of one run of the chain; by default whoever decided a stage is left
-- out of the later ones. Bad input is refused naming the stage and what is wrong with it.
CREATE OR REPLACE FUNCTION charter.define_approval_chain(
    p_org_id text, p_chain_id text, p_stages jsonb, p_allow_same_approver boolean DEFAULT false)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org     text := charter._acting_org(p_org_id);
    v_latest  charter.approval_chains;
    v_stage   jsonb;
    v_n       integer := 0;
    v_problem text;
    v_example text := '{"approvers": [{"role": "manager"}], "decision": "any"}';
BEGIN
    IF p_chain_id IS NULL OR p_chain_id !~ '^[A-Za-z0-9_.:-]{1,200}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH058', MESSAGE = format('%L is not a chain id', p_chain_id),
            HINT = 'Use 1 to 200 letters, digits, _ . : -, e.g. ap-standard.';
    END IF;
    IF jsonb_typeof(p_stages) IS DISTINCT FROM 'array' OR jsonb_array_length(p_stages) = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH058',
            MESSAGE = format('Chain %s needs a list of one or more stages, not %s', p_chain_id, coalesce(p_stages::text, 'null')),
            HINT = format('stages=[%s, ...]', v_example);
    END IF;
    IF p_allow_same_approver IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH058',
            MESSAGE = format('Chain %s: allowSameApprover is true or false, not null', p_chain_id),
            HINT = 'Leave it out (false: whoever decided a stage is left out of the later ones) or pass true.';
    END IF;
    FOR v_stage IN SELECT s FROM jsonb_array_elements(p_stages) AS s LOOP
        v_n := v_n + 1;
        v_problem := CASE
            WHEN jsonb_typeof(v_stage) <> 'object' THEN 'is not an object'
            WHEN EXISTS (SELECT 1 FROM jsonb_object_keys(v_stage) AS k WHERE k NOT IN ('approvers', 'decision')) THEN
                format('has %s, which a stage does not take (it takes approvers and decision)',
                       (SELECT string_agg(quote_literal(k), ', ' ORDER BY k) FROM jsonb_object_keys(v_stage) AS k
                         WHERE k NOT IN ('approvers', 'decision')))
            WHEN jsonb_typeof(v_stage->'approvers') IS DISTINCT FROM 'array' OR jsonb_array_length(v_stage->'approvers') = 0 THEN
                'has no approvers (a non-empty list)'
            WHEN v_stage ? 'decision' AND (jsonb_typeof(v_stage->'decision') <> 'string'
                                           OR v_stage->>'decision' NOT IN ('any', 'all')) THEN
                format('has decision %s, which is neither "any" nor "all"', v_stage->'decision')
            ELSE (SELECT format('has approver %s, which is not one of {"user": ID}, {"role": NAME}, {"rule": EXPR}, '
                                '{"managerOf": "requester"}', a)
                    FROM jsonb_array_elements(v_stage->'approvers') AS a
                   WHERE jsonb_typeof(a) <> 'object'
                      OR (SELECT count(*) FROM jsonb_object_keys(a)) <> 1
                      OR NOT (a ?| ARRAY['user', 'role', 'rule', 'managerOf'])
                      OR ((a ? 'user' OR a ? 'role')
                          AND (jsonb_typeof(coalesce(a->'user', a->'role')) <> 'string'
                               OR coalesce(a->>'user', a->>'role') = ''))
                      OR (a ? 'managerOf' AND a->>'managerOf' IS DISTINCT FROM 'requester')
                   LIMIT 1) END;
        IF v_problem IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH058',
                MESSAGE = format('Stage %s of chain %s %s: %s', v_n, p_chain_id, v_problem, v_stage),
                HINT = format('A stage looks like %s.', v_example);
        END IF;
    END LOOP;
    PERFORM pg_advisory_xact_lock(charter._lock_key('rule', format('chain:%s:%s', v_org, p_chain_id)));
    SELECT * INTO v_latest FROM charter.approval_chains AS c WHERE c.org_id = v_org AND c.chain_id = p_chain_id
     ORDER BY c.version DESC LIMIT 1;
    IF FOUND AND v_latest.stages = p_stages AND v_latest.allow_same_approver = p_allow_same_approver THEN
        RETURN jsonb_build_object('chainId', p_chain_id, 'version', v_latest.version, 'status', 'unchanged',
                                  'allowSameApprover', v_latest.allow_same_approver);
    END IF;
    INSERT INTO charter.approval_chains (org_id, chain_id, version, stages, allow_same_approver)
    VALUES (v_org, p_chain_id, coalesce(v_latest.version, 0) + 1, p_stages, p_allow_same_approver)
    RETURNING * INTO v_latest;
    RETURN jsonb_build_object('chainId', p_chain_id, 'version', v_latest.version, 'status', 'stored',
                              'allowSameApprover', v_latest.allow_same_approver);
END;
$$;

-- Opens the request of one approval (an inline node, or one stage of a chain), pinned to the
-- document's current version, its approvers resolved now and fixed. Segregation of duties
-- holds by construction: whoever _approval_exclusions leaves out (the requester, the authors
-- of the changes since the last approved version, an earlier stage's decider) is not among
-- the approvers, and a delegation to such a person is not applied (the approver keeps the
-- request). The people left out are recorded with why. Nobody left → APPROVERS_EMPTY.
CREATE OR REPLACE FUNCTION charter._open_request(
    p_instance charter.workflow_instances, p_document charter.documents, p_node text, p_token text,
    p_config jsonb, p_vars jsonb)
RETURNS charter.approval_requests
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_request   charter.approval_requests;
    v_resolved  text[];
    v_requester text;
    v_excluded  jsonb;
    v_kept      text[];
    v_approvers text[];
    v_delegated jsonb;
BEGIN
    v_resolved := charter._resolve_approvers(p_instance, p_node, p_config, p_vars);
    v_requester := charter._approval_requester(p_instance.org_id, p_document.id, p_document.version, p_instance.actor);
    v_excluded := charter._approval_exclusions(p_instance.org_id, p_document.id, p_document.version, v_requester,
                                               p_instance.id, p_node, p_token, p_config);
    v_kept := ARRAY(SELECT a FROM unnest(v_resolved) AS a WHERE NOT v_excluded ? a ORDER BY a);
    IF cardinality(v_kept) = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH051',
            MESSAGE = format('The approvers of %s%s on version %s of document %L resolve to %s, and none may approve it: %s',
                             p_node, coalesce(format(' (stage %s of chain %s)', (p_config->>'stage')::integer + 1,
                                                     p_config->>'chainId'), ''),
                             p_document.version, p_document.id, array_to_string(v_resolved, ', '),
                             (SELECT string_agg(format('%s (%s)', a, v_excluded->>a), ', ' ORDER BY a)
                                FROM unnest(v_resolved) AS a)),
            HINT = 'Nobody approves their own request or their own changes: give the approvers'' role to someone '
                   'who neither asked for this approval nor changed the document since its last approval, '
                   'then retry the instance.';
    END IF;
    -- Delegations in force now send a kept approver's request to the delegate, unless the
    -- delegate is left out of this request.
    SELECT coalesce(jsonb_object_agg(a, g.to_user), '{}'::jsonb) INTO v_delegated
      FROM unnest(v_kept) AS a
      JOIN LATERAL (SELECT x.to_user FROM charter.approval_delegations AS x
                     WHERE x.org_id = p_instance.org_id AND x.from_user = a
                       AND x.starts_at <= charter._now(p_instance.org_id) AND x.ends_at > charter._now(p_instance.org_id)
                     ORDER BY x.id DESC LIMIT 1) AS g ON NOT v_excluded ? g.to_user;
    v_approvers := ARRAY(SELECT DISTINCT coalesce(v_delegated->>a, a) FROM unnest(v_kept) AS a ORDER BY 1);
    INSERT INTO charter.approval_requests (org_id, run_id, node_id, token, document_id, entity_version,
                                           snapshot_version, config, approvers, decision, requester, delegated,
                                           excluded)
    VALUES (p_instance.org_id, p_instance.id, p_node, p_token, p_document.id, p_document.version,
            p_document.version, p_config, v_approvers, coalesce(p_config->>'decision', 'any'), v_requester,
            v_delegated,
            -- Who was left out that the approvers named, or a delegation would have reached.
            coalesce((SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(v_excluded) AS e
                       WHERE e.key = ANY (v_resolved) OR EXISTS (
                             SELECT 1 FROM charter.approval_delegations AS x
                              WHERE x.org_id = p_instance.org_id AND x.to_user = e.key AND x.from_user = ANY (v_kept)
                                AND x.starts_at <= charter._now(p_instance.org_id) AND x.ends_at > charter._now(p_instance.org_id))), '{}'::jsonb))
    RETURNING * INTO v_request;
    RETURN v_request;
END;
$$;

-- An approval node starts: inline → one request; chain → the chain's version pinned now and
-- its first stage's request. The node waits (kind approval).
CREATE OR REPLACE FUNCTION charter._start_approval(
    p_instance charter.workflow_instances, p_document charter.documents, p_node text, p_token text,
    p_config jsonb, p_vars jsonb, p_key text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_chain   charter.approval_chains;
    v_request charter.approval_requests;
    v_detail  jsonb;
BEGIN
    IF p_config->>'mode' = 'chain' THEN
        SELECT * INTO v_chain FROM charter.approval_chains AS c
         WHERE c.org_id = p_instance.org_id AND c.chain_id = p_config->>'chainId' ORDER BY c.version DESC LIMIT 1;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'CH051',
                MESSAGE = format('Approval %s runs chain %L, which org %L has not defined', p_node,
                                 p_config->>'chainId', p_instance.org_id),
                HINT = 'Define it: client.approvals.define_chain(chain_id, stages=[...]).';
        END IF;
        v_request := charter._open_request(p_instance, p_document, p_node, p_token,
            (v_chain.stages->0) || jsonb_build_object('chainId', v_chain.chain_id, 'chainVersion', v_chain.version,
                                                      'stage', 0, 'stages', v_chain.stages,
                                                      'allowSameApprover', v_chain.allow_same_approver), p_vars);
        v_detail := jsonb_build_object('requestId', v_request.id, 'entityVersion', v_request.entity_version,
                                       'approvers', to_jsonb(v_request.approvers), 'chainId', v_chain.chain_id,
                                       'chainVersion', v_chain.version, 'stage', 0);
    ELSE
        v_request := charter._open_request(p_instance, p_document, p_node, p_token, p_config, p_vars);
        v_detail := jsonb_build_object('requestId', v_request.id, 'entityVersion', v_request.entity_version,
                                       'approvers', to_jsonb(v_request.approvers), 'decision', v_request.decision);
    END IF;
    PERFORM charter._wait(p_instance, p_node, 'approval', p_token, 'approval', p_key, NULL,
        charter._now(p_instance.org_id) + (p_config->>'escalateAfter')::interval, NULL,
        v_detail || jsonb_strip_nulls(jsonb_build_object('escalateAfter', p_config->>'escalateAfter')));
END;
$$;

-- client.approvals.delegate: requests made for p_from while the window is open go to p_to.
CREATE OR REPLACE FUNCTION charter.delegate_approvals(
    p_org_id text, p_from text, p_to text, p_starts_at timestamptz, p_ends_at timestamptz)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org text := charter._acting_org(p_org_id);
    v_id  bigint;
BEGIN
    PERFORM charter._directory_actor(v_org, p_from);
    PERFORM charter._directory_actor(v_org, p_to);
    IF p_from = p_to OR p_ends_at <= coalesce(p_starts_at, charter._now(v_org)) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH058',
            MESSAGE = format('A delegation goes from one user to another over a window that ends after it starts (%s to %s, %s to %s)',
                             p_from, p_to, coalesce(p_starts_at, charter._now(v_org)), p_ends_at),
            HINT = 'delegate("u-2", to="u-5", starts_at=..., ends_at=...).';
    END IF;
    INSERT INTO charter.approval_delegations (org_id, from_user, to_user, starts_at, ends_at)
    VALUES (v_org, p_from, p_to, coalesce(p_starts_at, charter._now(v_org)), p_ends_at) RETURNING id INTO v_id;
    RETURN jsonb_build_object('id', v_id, 'from', p_from, 'to', p_to,
                              'startsAt', coalesce(p_starts_at, charter._now(v_org)), 'endsAt', p_ends_at);
END;
$$;

-- escalateAfter passed with the request undecided: it goes to its approvers' managers
-- (recorded as escalated) and notifications tell them, by email and in the app; the node
-- waits on. A manager whom
-- segregation of duties leaves out of the request (its requester, an author of the changes
-- it covers, an earlier stage's decider) is not among them; with nobody left it stays with
-- its approvers.
CREATE OR REPLACE FUNCTION charter._escalate_approval(p_instance charter.workflow_instances, p_wait charter.instance_waits)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_request  charter.approval_requests;
    v_managers text[];
    v_excluded jsonb;
    v_key      text;
BEGIN
    SELECT * INTO v_request FROM charter.approval_requests AS r
     WHERE r.id = p_wait.detail->>'requestId' AND r.org_id = p_wait.org_id AND r.status = 'pending'
       FOR UPDATE;
    IF FOUND AND v_request.escalated_at IS NULL THEN
        v_excluded := charter._approval_exclusions(v_request.org_id, v_request.document_id, v_request.entity_version,
            v_request.requester, v_request.run_id, v_request.node_id, v_request.token, v_request.config);
        v_managers := ARRAY(SELECT DISTINCT u.manager_id FROM charter.directory_users AS u
                             WHERE u.org_id = v_request.org_id AND u.user_id = ANY (v_request.approvers)
                               AND u.manager_id IS NOT NULL AND NOT v_excluded ? u.manager_id ORDER BY 1);
        IF cardinality(v_managers) > 0 THEN
            UPDATE charter.approval_requests
               SET approvers = v_managers, escalated_at = now(),
                   delegated = delegated || jsonb_build_object('escalatedFrom', to_jsonb(v_request.approvers))
             WHERE id = v_request.id AND org_id = v_request.org_id;
            v_key := encode(sha256(convert_to(v_request.id || '|escalation', 'UTF8')), 'hex');
            INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key)
            VALUES (v_request.org_id, 'side_effects', v_key) ON CONFLICT DO NOTHING;
            IF FOUND THEN
                INSERT INTO charter.side_effects (org_id, run_id, node_id, effect_type, request, idempotency_key, trace_id)
                VALUES (v_request.org_id, v_request.run_id, v_request.node_id || '#escalation', 'notification',
                        jsonb_build_object('channel', 'email', 'subject', format('Approval escalated: %s %s',
                                               p_instance.entity_type, v_request.document_id),
                                           'body', format('Request %s waited since %s; it is yours to decide now.',
                                                          v_request.id, v_request.created_at),
                                           'recipients', (SELECT jsonb_agg(jsonb_build_object('user', u.user_id, 'address', u.email) ORDER BY u.user_id)
                                                            FROM charter.directory_users AS u
                                                           WHERE u.org_id = v_request.org_id AND u.user_id = ANY (v_managers))),
                        v_key, p_instance.trace_id);
            END IF;
            -- And in the app: the escalation reaches them even where email is not set up.
            INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key)
            VALUES (v_request.org_id, 'side_effects', v_key || '.in_app') ON CONFLICT DO NOTHING;
            IF FOUND THEN
                INSERT INTO charter.side_effects (org_id, run_id, node_id, effect_type, request, idempotency_key, trace_id)
                VALUES (v_request.org_id, v_request.run_id, v_request.node_id || '#escalation', 'notification',
                        jsonb_build_object('channel', 'in_app', 'subject', format('Approval escalated: %s %s',
                                               p_instance.entity_type, v_request.document_id),
                                           'body', format('Request %s waited since %s; it is yours to decide now.',
                                                          v_request.id, v_request.created_at),
                                           'to', array_to_string(v_managers, ', '),
                                           'recipients', (SELECT jsonb_agg(jsonb_build_object('user', m) ORDER BY m)
                                                            FROM unnest(v_managers) AS m)),
                        v_key || '.in_app', p_instance.trace_id);
            END IF;
        END IF;
    END IF;
    -- The node waits on (without a deadline now).
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, detail)
    VALUES (p_wait.run_id, p_wait.node_id, p_wait.org_id, p_wait.token, 'approval', p_wait.entity_version,
            p_wait.detail || jsonb_build_object('escalated', true, 'approvers',
                to_jsonb(CASE WHEN cardinality(v_managers) > 0 THEN v_managers ELSE v_request.approvers END)));
END;
$$;
