-- A user of the directory as expressions see an actor ({"id", "roles", "manager", "email",
-- "phone"}). A SQL-standard body without a SET clause: PostgreSQL inlines it where it is
-- called, so mutate() reads the actor in the statement that reads the document.
CREATE OR REPLACE FUNCTION charter._actor_json(p_user charter.directory_users)
RETURNS jsonb
LANGUAGE sql
STABLE
RETURN jsonb_build_object('id', p_user.user_id, 'roles', to_jsonb(p_user.roles), 'manager', p_user.manager_id,
                          'email', p_user.email, 'phone', p_user.phone, 'reserved', false);
