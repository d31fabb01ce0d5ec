CREATE OR REPLACE FUNCTION charter._state_window(p_contract jsonb, p_state text)
RETURNS text
LANGUAGE sql
STABLE
RETURN coalesce(jsonb_path_query_first(p_contract->'states', '$[*] ? (@.id == $state).editWindow',
                                       jsonb_build_object('state', p_state)) #>> '{}',
                'locked');
