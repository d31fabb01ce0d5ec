-- Workers record the channels they can send (issue #38): a notification on a channel no
-- running worker has (email without CHARTER_SMTP_URL) is a dead letter at once,
-- CHANNEL_NOT_CONFIGURED, instead of pending for ever.

ALTER TABLE charter.workers ADD COLUMN channels text[];
COMMENT ON COLUMN charter.workers.channels IS
    'What the worker can send, as claim_side_effects names it (notification:email, …); NULL for a worker that has not said (it may send anything).';
