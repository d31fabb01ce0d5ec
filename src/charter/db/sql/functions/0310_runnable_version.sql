-- The version a new run of p_flow_slug runs: p_version_id if it is a compiled flow version of
-- it, else the flow's current version. Raises what is wrong otherwise.
CREATE OR REPLACE FUNCTION charter._runnable_version(p_flow_slug text, p_version_id text)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_version_id text;
    v_compiled   boolean;
BEGIN
    IF p_version_id IS NOT NULL THEN
        SELECT v.id, v.compiled IS NOT NULL INTO v_version_id, v_compiled
          FROM charter.workflow_versions AS v
         WHERE v.id = p_version_id AND v.workflow_slug = p_flow_slug AND v.definition_kind = 'flow';
        IF v_version_id IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH014',
                MESSAGE = format('Version %s is not a runnable version of flow %L', p_version_id, p_flow_slug),
                HINT = 'Pass a version of this flow whose definition is a flow (see charter lineage), or none for the current one.';
        END IF;
    ELSE
        SELECT v.id, v.compiled IS NOT NULL INTO v_version_id, v_compiled
          FROM charter.workflows AS w
          JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
         WHERE w.slug = p_flow_slug AND v.definition_kind = 'flow';
    END IF;
    IF v_version_id IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH003',
            MESSAGE = format('Flow %L is not in the database (or has no flow version)', p_flow_slug),
            HINT = 'Start a worker for it (charter worker MODULE) or publish it (charter deploy MODULE) first.';
    END IF;
    IF NOT v_compiled THEN
        RAISE EXCEPTION USING ERRCODE = 'CH023',
            MESSAGE = format('Version %s of flow %L has no compiled artifact, so it cannot run (WF-07)', v_version_id, p_flow_slug),
            HINT = 'Compile it as the schema''s owner: charter recompile.';
    END IF;
    RETURN v_version_id;
END;
$$;
