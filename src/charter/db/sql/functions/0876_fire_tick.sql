-- One tick: a flow run with the id schedule:<org>:<name>:<tick>, a document with that id,
-- or a gate passed (as system) for every document of the entity type in a state it leads from.
CREATE OR REPLACE FUNCTION charter._fire_tick(p_schedule charter.schedules, p_tick timestamptz)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_id       text := format('schedule:%s:%s', p_schedule.name, to_char(p_tick AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"'));
    v_target   jsonb := p_schedule.target;
    v_run      jsonb;
    v_document text;
    v_count    integer := 0;
BEGIN
    IF v_target->>'kind' = 'flow' THEN
        v_run := charter.start_run(v_target->>'flow', coalesce(v_target->'input', 'null'::jsonb),
                                   p_schedule.org_id || ':' || v_id, p_schedule.org_id);
        RETURN jsonb_build_object('tick', p_tick, 'runId', v_run->>'runId');
    END IF;
    PERFORM set_config('charter.org_id', p_schedule.org_id, true);
    IF v_target->>'action' = 'create' THEN
        PERFORM charter.mutate(p_schedule.org_id, 'create', v_id, coalesce(v_target->'input', '{}'::jsonb), 'system',
                               p_entity_type => v_target->>'entityType', p_reason => format('schedule %s', p_schedule.name),
                               p_via => 'system');
        RETURN jsonb_build_object('tick', p_tick, 'documentId', v_id);
    END IF;
    FOR v_document IN
        SELECT d.id FROM charter.documents AS d
         WHERE d.org_id = p_schedule.org_id AND d.entity_type = v_target->>'entityType'
           AND d.amended_by IS NULL  -- superseded: its amendment goes through the gate instead
           AND d.state IN (SELECT t->>'from' FROM charter.workflow_versions AS c,
                                  jsonb_array_elements(c.contract->'transitions') AS t
                            WHERE c.id = d.contract_version_id AND t->>'gate' = v_target->>'action')
         ORDER BY d.id LOOP
        PERFORM charter.mutate(p_schedule.org_id, v_target->>'action', v_document, '{}'::jsonb, 'system',
                               p_reason => format('schedule %s', p_schedule.name), p_via => 'system');
        v_count := v_count + 1;
    END LOOP;
    RETURN jsonb_build_object('tick', p_tick, 'documents', v_count);
END;
$$;
