-- Starts many runs of one flow in one call: p_inputs is a JSON array, one input per run;
-- p_run_ids (optional) gives each run's id, idempotent per id exactly as start_run. Returns
-- the run ids in input order. One transaction: all start, or none. p_priority applies to all.
CREATE OR REPLACE FUNCTION charter.start_runs(
    p_flow_slug text,
    p_inputs jsonb,
    p_run_ids text[] DEFAULT NULL,
    p_org_id text DEFAULT 'default',
    p_version_id text DEFAULT NULL,
    p_priority integer DEFAULT NULL
)
RETURNS text[]
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_count  integer;
    v_ids    text[] := '{}';
    v_index  integer;
BEGIN
    IF jsonb_typeof(p_inputs) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH008',
            MESSAGE = 'start_runs takes a JSON array of inputs, one per run',
            HINT = 'Pass a list of inputs.';
    END IF;
    v_count := jsonb_array_length(p_inputs);
    IF p_run_ids IS NOT NULL AND cardinality(p_run_ids) <> v_count THEN
        RAISE EXCEPTION USING ERRCODE = 'CH008',
            MESSAGE = format('start_runs got %s inputs but %s run ids', v_count, cardinality(p_run_ids)),
            HINT = 'Give one run id per input, or none.';
    END IF;
    FOR v_index IN 0 .. v_count - 1 LOOP
        v_ids := v_ids || (charter.start_run(p_flow_slug, p_inputs -> v_index,
                                             p_run_ids[v_index + 1], p_org_id, p_version_id,
                                             p_priority) ->> 'runId');
    END LOOP;
    RETURN v_ids;
END;
$$;
