-- client.approvals.delegate: requests made for p_from while the window is open go to p_to.
CREATE OR REPLACE FUNCTION charter.delegate_approvals(
    p_org_id text, p_from text, p_to text, p_starts_at timestamptz, p_ends_at timestamptz)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org text := charter._acting_org(p_org_id);
    v_id  bigint;
BEGIN
    PERFORM charter._directory_actor(v_org, p_from);
    PERFORM charter._directory_actor(v_org, p_to);
    IF p_from = p_to OR p_ends_at <= coalesce(p_starts_at, charter._now(v_org)) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH058',
            MESSAGE = format('A delegation goes from one user to another over a window that ends after it starts (%s to %s, %s to %s)',
                             p_from, p_to, coalesce(p_starts_at, charter._now(v_org)), p_ends_at),
            HINT = 'delegate("u-2", to="u-5", starts_at=..., ends_at=...).';
    END IF;
    INSERT INTO charter.approval_delegations (org_id, from_user, to_user, starts_at, ends_at)
    VALUES (v_org, p_from, p_to, coalesce(p_starts_at, charter._now(v_org)), p_ends_at) RETURNING id INTO v_id;
    RETURN jsonb_build_object('id', v_id, 'from', p_from, 'to', p_to,
                              'startsAt', coalesce(p_starts_at, charter._now(v_org)), 'endsAt', p_ends_at);
END;
$$;
