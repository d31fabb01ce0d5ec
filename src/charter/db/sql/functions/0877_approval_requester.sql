-- The requester of an approval on a version: the user who last passed a gate of the
-- document by hand (through the api) up to that version — the submitter — else the user who
-- last drove the instance.
CREATE OR REPLACE FUNCTION charter._approval_requester(
    p_org_id text, p_document_id text, p_version integer, p_fallback text)
RETURNS text
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT coalesce((SELECT a.actor FROM charter.document_audit AS a
                      WHERE a.org_id = p_org_id AND a.document_id = p_document_id AND a.version <= p_version
                        AND a.via = 'api' AND a.changes ? '$state'
                        AND a.actor <> 'system' AND a.actor NOT LIKE 'service:%'
                      ORDER BY a.version DESC LIMIT 1),
                    p_fallback)
$$;
