-- Stores a version's artifact compiled again (by `charter recompile`, the owner's way out of
-- WORKFLOW_COMPILER_STALE): a flow's shape and steps, an envelope's contract, an effective
-- workflow's org definition stay exactly as they were; only the artifact, its hash and the
-- compiler version change. Returns the new hash.
CREATE OR REPLACE FUNCTION charter.store_recompiled(p_version_id text, p_compiled jsonb)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF p_compiled IS NULL OR p_compiled->>'hash' IS NULL OR p_compiled->>'compilerVersion' IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH001',
            MESSAGE = format('The artifact for version %s has no hash or compiler version', p_version_id),
            HINT = 'Pass a CompiledWorkflow as charter''s compiler makes it.';
    END IF;
    PERFORM set_config('charter.recompiling', p_version_id, true);
    UPDATE charter.workflow_versions
       SET compiled = p_compiled, compiled_hash = p_compiled->>'hash',
           compiler_version = p_compiled->>'compilerVersion'
     WHERE id = p_version_id AND definition_kind IN ('flow', 'envelope', 'effective');
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH014',
            MESSAGE = format('Version %s is not a flow or contracted workflow version', p_version_id),
            HINT = 'charter recompile lists the versions it can compile again.';
    END IF;
    PERFORM set_config('charter.recompiling', '', true);
    RETURN p_compiled->>'hash';
END;
$$;
