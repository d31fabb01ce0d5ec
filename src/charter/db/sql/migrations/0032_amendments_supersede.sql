-- An amendment supersedes its original (issue #36). The original records the document that
-- amended it, so mutate() refuses it from its own row (DOCUMENT_AMENDED) and a change racing
-- the amendment waits for the row and then sees it. Inbound events may name the document they
-- are for, so an event sent for the original never resumes its amendment.
ALTER TABLE charter.documents ADD COLUMN amended_by text;
COMMENT ON COLUMN charter.documents.amended_by IS
    'The document that amended this one (its amended_from); set once, and the document no longer changes.';

-- The documents amended so far.
UPDATE charter.documents AS o
   SET amended_by = a.id
  FROM charter.documents AS a
 WHERE a.org_id = o.org_id AND a.amended_from = o.id;

ALTER TABLE charter.inbound_events ADD COLUMN document_id text;
COMMENT ON COLUMN charter.inbound_events.document_id IS
    'The document the event is for, when its sender named one: only that document''s waits take it.';

-- send_event gains p_document_id (functions/0825_instance_waits.sql makes it again).
DROP FUNCTION IF EXISTS charter.send_event(text, text, jsonb, text, interval);
