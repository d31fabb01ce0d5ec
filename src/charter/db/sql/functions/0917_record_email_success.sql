CREATE OR REPLACE FUNCTION charter.record_email_success(p_payload jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_original jsonb := p_payload->'original_payload';
BEGIN
    INSERT INTO charter.send_email_task_succeeded (org_id, send_email_task_id, attempt, provider_response)
    SELECT t.org_id, t.id, (v_original->>'attempt')::integer, coalesce(p_payload->'worker_payload', '{}'::jsonb)
      FROM charter.send_email_tasks AS t
     WHERE t.id = (v_original->>'send_email_task_id')::bigint AND t.org_id = current_setting('charter.org_id', true)
    ON CONFLICT DO NOTHING;
    RETURN jsonb_build_object('success', true);
END;
$$;
