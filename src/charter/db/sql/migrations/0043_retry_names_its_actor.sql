-- retry_run names who retries (a document's instance records them in its evidence, and in
-- its audit when a dead letter is re-driven): it gains a parameter, so its old signature
-- goes, and _retry_instance's with it.
DROP FUNCTION IF EXISTS charter.retry_run(text, text);
DROP FUNCTION IF EXISTS charter._retry_instance(text, text);
