-- An amendment supersedes its original (issue #36). The original records the document that
-- amended it, so mutate() refuses it from its own row (DOCUMENT_AMENDED) and a change racing
-- the amendment waits for the row and then sees it.
ALTER TABLE charter.documents ADD COLUMN amended_by text;
COMMENT ON COLUMN charter.documents.amended_by IS
    'The document that amended this one (its amended_from); set once, and the document no longer changes.';

-- The documents amended so far.
UPDATE charter.documents AS o
   SET amended_by = a.id
  FROM charter.documents AS a
 WHERE a.org_id = o.org_id AND a.amended_from = o.id;
