-- The org of a run named by its id, for a caller that did not name it (an operator's
-- charter cancel, a test); p_org_id when given. A client and a worker always name the org:
-- they have it, and a statement that names it reads one org's rows (one shard when
-- distributed, § 15 of docs/architecture.md). Run ids are unique per org only: an id that
-- several orgs use is refused here, naming them, rather than guessed.
-- A transaction that set charter.org_id acts for that org alone, as the document functions
-- do (_acting_org): an org named besides it is ORG_MISMATCH, and a run named by its id alone
-- is looked for in that org only, so another org's run is not found.
CREATE OR REPLACE FUNCTION charter._run_org(p_run_id text, p_org_id text)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_orgs    text[];
    v_session text;
BEGIN
    IF p_org_id IS NOT NULL THEN
        RETURN charter._acting_org(p_org_id);
    END IF;
    v_session := nullif(current_setting('charter.org_id', true), '');
    IF v_session IS NOT NULL THEN
        RETURN v_session;
    END IF;
    SELECT array_agg(r.org_id ORDER BY r.org_id) INTO v_orgs FROM charter.runs AS r WHERE r.id = p_run_id;
    IF cardinality(v_orgs) > 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = format('Run id %L is used by several orgs (%s); name the org of the run you mean',
                             p_run_id, array_to_string(v_orgs, ', ')),
            HINT = 'Pass --org ORG on the command line, or call with the org (a client names its own).';
    END IF;
    RETURN v_orgs[1];
END;
$$;
