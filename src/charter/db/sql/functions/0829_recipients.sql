-- A notification's recipients from the directory: 'role:NAME' is everyone with the role,
-- a user id is that user (email or phone by channel), anything else is an address as given.
CREATE OR REPLACE FUNCTION charter._recipients(p_org_id text, p_channel text, p_to text)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(
        CASE WHEN p_to LIKE 'role:%' THEN
            (SELECT jsonb_agg(jsonb_build_object('user', u.user_id,
                                                 'address', CASE WHEN p_channel = 'sms' THEN u.phone ELSE u.email END)
                              ORDER BY u.user_id)
               FROM charter.directory_users AS u
              WHERE u.org_id = p_org_id AND substr(p_to, 6) = ANY (u.roles))
        ELSE
            (SELECT jsonb_build_array(jsonb_build_object('user', u.user_id,
                                      'address', CASE WHEN p_channel = 'sms' THEN u.phone ELSE u.email END))
               FROM charter.directory_users AS u WHERE u.org_id = p_org_id AND u.user_id = p_to)
        END,
        CASE WHEN p_to LIKE 'role:%' THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object('address', p_to)) END)
$$;
