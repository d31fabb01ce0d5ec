-- The org a call acts for (_check_acting_org's rules). A SQL-standard body without a SET
-- clause: PostgreSQL inlines it where it is called, and the helper that says what is wrong
-- runs only for an org it refuses.
CREATE OR REPLACE FUNCTION charter._acting_org(p_org_id text)
RETURNS text
LANGUAGE sql
STABLE
RETURN CASE WHEN length(p_org_id) BETWEEN 1 AND 200
             AND coalesce(nullif(current_setting('charter.org_id', true), '') = p_org_id, true)
            THEN p_org_id
            ELSE charter._check_acting_org(p_org_id) END;
