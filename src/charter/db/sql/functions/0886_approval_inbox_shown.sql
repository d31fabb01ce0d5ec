-- The dashboard's inbox in one call: each request waiting for p_user (as approval_inbox,
-- oldest first) with what its approver reads (get_approval's review: title, summary, the
-- field table against the last approved version, the data at the pinned version).
CREATE OR REPLACE FUNCTION charter.approval_inbox_shown(p_org_id text, p_user text)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object('request', i.request,
                              'review', charter.get_approval(p_org_id, i.request ->> 'id', 'review'))
      FROM charter.approval_inbox(p_org_id, p_user) WITH ORDINALITY AS i(request, n)
     ORDER BY i.n
$$;
