-- Envelopes are published with their contract by publish_contract; the older function that
-- stored an envelope alone goes.
DROP FUNCTION IF EXISTS charter.publish_envelope(text, jsonb, jsonb);
