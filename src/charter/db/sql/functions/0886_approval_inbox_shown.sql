-- The dashboard's inbox in one call: each request waiting for p_user (as approval_inbox,
-- oldest first) with the document at its pinned version and the diff an approver is shown.
CREATE OR REPLACE FUNCTION charter.approval_inbox_shown(p_org_id text, p_user text)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object('request', i.request,
                              'snapshot', charter.get_approval(p_org_id, i.request ->> 'id', 'snapshot'),
                              'diff', charter.get_approval(p_org_id, i.request ->> 'id', 'diff'))
      FROM charter.approval_inbox(p_org_id, p_user) WITH ORDINALITY AS i(request, n)
     ORDER BY i.n
$$;
