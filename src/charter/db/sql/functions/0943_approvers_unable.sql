-- Workflow health (seed 002 § Workflow Health, Phase 3): what the health page, /metrics and
-- `charter doctor` show — the stuck detector with its three ways out, and what is waiting.

-- Stuck means something that should be moving is not (each entry says why, `reason`):
--   task_overdue       a handler task (or a flow task) ready and not claimed, or claimed past
--                      its lease, for p_minutes: no worker runs it;
--   node_not_run       a node ready (or running with nothing to wait for) that the engine
--                      has not run, the instance idle for p_minutes;
--   event_not_applied  a document event in the outbox not applied within p_minutes;
--   timer_overdue      a timer, a retry or an approval's escalation due p_minutes ago and not
--                      fired;
--   timeout_overdue    an event wait's timeout passed p_minutes ago and not fired;
--   delivery_overdue   a side effect of the instance p_minutes past its retry time (or lease);
--   approval_undecidable  a pending approval request none of whose approvers may decide it
--                      (left the directory, left out by segregation of duties — say a
--                      delegation to its requester — or an empty role); no grace;
--   nothing_pending    running, idle p_minutes, with nothing pending at all, and not at a
--                      state waiting for a transition.
-- Waiting for a person, an event or a timer not yet due is not stuck (waiting_instances).
-- One entry per instance (or flow run): its first reason, and all of them.

-- A pending request's approvers who may not decide it now, as {user: why}: not in the
-- org's directory, left out by segregation of duties, or decided already.
CREATE OR REPLACE FUNCTION charter._approvers_unable(p_request charter.approval_requests)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
-- (PL/pgSQL, not SQL, for a plan kept per session: it runs once per pending request.)
DECLARE
    v_excluded jsonb;
BEGIN
    v_excluded := charter._approval_exclusions(p_request.org_id, p_request.document_id, p_request.entity_version,
                      p_request.requester, p_request.run_id, p_request.node_id, p_request.token, p_request.config)
                  || CASE WHEN p_request.requester IS NULL THEN '{}'::jsonb
                          ELSE jsonb_build_object(p_request.requester, 'requester') END;
    RETURN (
        SELECT coalesce(jsonb_object_agg(a.who, CASE
                   WHEN u.user_id IS NULL THEN 'not in the directory'
                   WHEN v_excluded ? a.who THEN v_excluded->>a.who
                   ELSE 'decided' END), '{}'::jsonb)
          FROM unnest(p_request.approvers) AS a(who)
          LEFT JOIN charter.directory_users AS u ON u.org_id = p_request.org_id AND u.user_id = a.who
         WHERE u.user_id IS NULL OR v_excluded ? a.who
            OR EXISTS (SELECT 1 FROM charter.approval_decisions AS d
                        WHERE d.request_id = p_request.id AND d.org_id = p_request.org_id AND d.actor = a.who));
END;
$$;
