-- Channels no worker can send (issue #38): a worker records what it can send when it
-- registers; a notification on a channel that no running worker serving its org has (email
-- without CHARTER_SMTP_URL, SMS without CHARTER_SMS_URL) is claimed by a worker that lacks it
-- too and answered at once as a dead letter, CHANNEL_NOT_CONFIGURED, rather than left
-- pending for ever. A worker that has not said what it sends (channels NULL) may send
-- anything, so nothing is dead-lettered while one runs.

-- Records what the worker can send, as claim_side_effects names it ('webhook',
-- 'notification:email', …; nothing for a worker without the documents engine). False when
-- the worker has not registered.
CREATE OR REPLACE FUNCTION charter.set_worker_channels(p_worker_id text, p_channels text[])
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    UPDATE charter.workers SET channels = coalesce(p_channels, '{}') WHERE id = p_worker_id;
    RETURN FOUND;
END;
$$;
