-- Refuses any change of a document that was amended (DOCUMENT_AMENDED): the amendment
-- superseded it, so a change of the original — a payment of an invoice that was replaced —
-- would be a second truth. The message names the amendment, and the latest one when the
-- amendment was itself amended since. Called only on the refusal path (mutate() and
-- amend_document() test p_document.amended_by first).
CREATE OR REPLACE FUNCTION charter._document_amended(p_document charter.documents)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_latest text;
BEGIN
    -- Each document is amended at most once, so the amendments form a chain: its end is
    -- the one still in force.
    WITH RECURSIVE chain AS (
        SELECT d.id, d.amended_by, 1 AS depth FROM charter.documents AS d
         WHERE d.org_id = p_document.org_id AND d.id = p_document.amended_by
        UNION ALL
        SELECT d.id, d.amended_by, c.depth + 1 FROM chain AS c
          JOIN charter.documents AS d ON d.org_id = p_document.org_id AND d.id = c.amended_by
         WHERE c.depth < 1000
    )
    SELECT c.id INTO v_latest FROM chain AS c ORDER BY c.depth DESC LIMIT 1;
    v_latest := coalesce(v_latest, p_document.amended_by);
    RAISE EXCEPTION USING ERRCODE = 'CH075',
        MESSAGE = format('Document %L was amended by %L%s: it no longer changes', p_document.id,
                         p_document.amended_by,
                         CASE WHEN v_latest <> p_document.amended_by
                              THEN format(' (itself amended since; the amendment in force is %L)', v_latest) ELSE '' END),
        HINT = format('Work on the amendment %L instead (documents.get(%L)).', v_latest, v_latest);
END;
$$;
