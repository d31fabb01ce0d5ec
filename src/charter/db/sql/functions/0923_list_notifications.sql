CREATE OR REPLACE FUNCTION charter.list_notifications(
    p_org_id text, p_user_id text, p_unread_only boolean DEFAULT false, p_limit integer DEFAULT 100)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object('id', n.id, 'user', n.user_id, 'subject', n.subject, 'body', n.body,
                              'runId', n.run_id, 'node', n.node_id, 'effectId', n.effect_id,
                              'createdAt', n.created_at, 'readAt', n.read_at)
      FROM charter.notifications AS n
     WHERE n.org_id = charter._acting_org(p_org_id) AND n.user_id = p_user_id
       AND (NOT p_unread_only OR n.read_at IS NULL)
     ORDER BY n.created_at DESC, n.id DESC
     LIMIT greatest(1, least(coalesce(p_limit, 100), 1000))
$$;
