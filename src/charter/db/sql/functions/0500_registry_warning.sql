-- A structured registry warning: {"code", "message", "severity": INFO | WARN}.
CREATE OR REPLACE FUNCTION charter._registry_warning(p_code text, p_message text, p_severity text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object('code', p_code, 'message', p_message, 'severity', p_severity)
$$;
