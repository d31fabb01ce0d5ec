-- The projection of a run derived from the facts alone: the pinned DAG, the run input and
-- the run's step_executions (WF-15). Reads nothing of runs.status/output/error or
-- step_states. A completed element or step is one with a 'completed' evidence row; the run
-- failed if a terminal failure is newer than its last retry, and was cancelled if a $run
-- 'cancelled' row exists. p_org_id is the run's org (looked up by id when null).
CREATE OR REPLACE FUNCTION charter.compute_run_projection(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org        text := charter._run_org(p_run_id, p_org_id);
    v_run        charter.runs;
    v_retry_id   bigint;
    v_failure    record;
    v_cancelled  boolean;
    v_status     text;
    v_outputs    jsonb := '{}';
    v_steps      jsonb := '{}';
    v_step       record;
    v_deps       text[];
    v_arrivals   integer;
    v_source     jsonb;
    v_count      integer;
    v_done       integer;
    v_completed  boolean;
    v_state      text;
    v_leaves     text[];
    v_leaf_done  integer;
BEGIN
    SELECT * INTO v_run FROM charter.runs AS r WHERE r.id = p_run_id AND r.org_id = v_org;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT max(e.id) INTO v_retry_id FROM charter.step_executions AS e
     WHERE e.run_id = p_run_id AND e.org_id = v_org AND e.step_slug = '$run' AND e.status = 'retried';
    SELECT e.step_slug, e.error INTO v_failure FROM charter.step_executions AS e
     WHERE e.run_id = p_run_id AND e.org_id = v_org AND e.status = 'failed' AND e.terminal
       AND e.id > coalesce(v_retry_id, 0)
     ORDER BY e.id DESC LIMIT 1;
    v_cancelled := EXISTS (SELECT 1 FROM charter.step_executions AS e
                            WHERE e.run_id = p_run_id AND e.org_id = v_org AND e.step_slug = '$run'
                              AND e.status = 'cancelled');
    v_status := CASE WHEN v_failure.step_slug IS NOT NULL THEN 'failed'
                     WHEN v_cancelled THEN 'cancelled' ELSE 'running' END;

    FOR v_step IN
        SELECT s.slug, s.step_type FROM charter.flow_steps AS s
         WHERE s.version_id = v_run.version_id ORDER BY s.step_index
    LOOP
        SELECT coalesce(array_agg(d.dep_slug), '{}') INTO v_deps FROM charter.flow_step_deps AS d
         WHERE d.version_id = v_run.version_id AND d.step_slug = v_step.slug;
        SELECT count(*) INTO v_arrivals FROM unnest(v_deps) AS dep WHERE v_outputs ? dep;
        v_count := NULL;
        v_done := 0;
        v_completed := false;
        IF v_arrivals = cardinality(v_deps) THEN
            IF v_step.step_type = 'single' THEN
                v_count := 1;
                SELECT e.output INTO v_source FROM charter.step_executions AS e
                 WHERE e.run_id = p_run_id AND e.org_id = v_org AND e.step_slug = v_step.slug AND e.status = 'completed'
                 LIMIT 1;
                v_completed := FOUND;
                v_done := CASE WHEN v_completed THEN 1 ELSE 0 END;
                IF v_completed THEN
                    v_outputs := v_outputs || jsonb_build_object(v_step.slug, v_source);
                END IF;
            ELSE
                v_source := CASE WHEN cardinality(v_deps) = 0 THEN v_run.input
                                 ELSE v_outputs -> v_deps[1] END;
                IF jsonb_typeof(v_source) = 'array' THEN
                    v_count := jsonb_array_length(v_source);
                    SELECT count(*) INTO v_done FROM charter.step_executions AS e
                     WHERE e.run_id = p_run_id AND e.org_id = v_org AND e.step_slug = v_step.slug AND e.status = 'completed';
                    v_completed := v_done = v_count;
                    IF v_completed THEN
                        v_outputs := v_outputs || jsonb_build_object(v_step.slug, coalesce((
                            SELECT jsonb_agg(e.output ORDER BY e.task_index)
                              FROM charter.step_executions AS e
                             WHERE e.run_id = p_run_id AND e.org_id = v_org AND e.step_slug = v_step.slug
                               AND e.status = 'completed'), '[]'::jsonb));
                    END IF;
                END IF;
            END IF;
        END IF;
        v_state := CASE
            WHEN v_completed THEN 'completed'
            WHEN v_arrivals < cardinality(v_deps) THEN 'waiting'
            WHEN v_status = 'failed' AND v_failure.step_slug = v_step.slug THEN 'failed'
            WHEN v_status IN ('failed', 'cancelled') THEN 'cancelled'
            ELSE 'ready' END;
        v_steps := v_steps || jsonb_build_object(v_step.slug, jsonb_build_object(
            'status', v_state, 'required', cardinality(v_deps), 'arrivals', v_arrivals,
            'initialTasks', v_count,
            'remainingTasks', CASE WHEN v_count IS NULL THEN NULL ELSE v_count - v_done END));
    END LOOP;

    SELECT coalesce(array_agg(s.slug), '{}') INTO v_leaves FROM charter.flow_steps AS s
     WHERE s.version_id = v_run.version_id
       AND NOT EXISTS (SELECT 1 FROM charter.flow_step_deps AS d
                        WHERE d.version_id = s.version_id AND d.dep_slug = s.slug);
    SELECT count(*) INTO v_leaf_done FROM unnest(v_leaves) AS leaf WHERE v_outputs ? leaf;
    v_steps := v_steps || jsonb_build_object('$end', jsonb_build_object(
        'status', CASE WHEN v_leaf_done = cardinality(v_leaves) THEN 'completed' ELSE 'waiting' END,
        'required', cardinality(v_leaves), 'arrivals', v_leaf_done,
        'initialTasks', NULL, 'remainingTasks', NULL));
    IF v_leaf_done = cardinality(v_leaves) THEN
        v_status := 'completed';
    END IF;
    RETURN jsonb_build_object(
        'status', v_status,
        'output', CASE WHEN v_status = 'completed' THEN (
            SELECT jsonb_object_agg(leaf, v_outputs -> leaf) FROM unnest(v_leaves) AS leaf) END,
        'error', CASE WHEN v_status = 'failed' THEN v_failure.error END,
        'steps', v_steps);
END;
$$;
