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
