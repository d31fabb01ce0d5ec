-- Whether _checked_changes refuses one field of the changes: not among p_allowed (an
-- action's fields, when given), not declared by the contract's p_fields (when it declares
-- fields), or a value of another type than declared (null clears any field). A SQL-standard
-- body without a SET clause: PostgreSQL inlines it, so mutate() checks a patch in the pass
-- that computes its changes and calls _checked_changes only to say what is wrong.
CREATE OR REPLACE FUNCTION charter._field_refused(p_fields jsonb, p_allowed jsonb, p_key text, p_value jsonb)
RETURNS boolean
LANGUAGE sql
IMMUTABLE
RETURN (p_allowed IS NOT NULL AND NOT p_allowed ? p_key)
    OR (p_fields IS NOT NULL
        AND (p_fields->>p_key IS NULL
             OR (p_fields->>p_key <> 'any' AND jsonb_typeof(p_value) <> 'null'
                 AND jsonb_typeof(p_value) <> p_fields->>p_key)));
