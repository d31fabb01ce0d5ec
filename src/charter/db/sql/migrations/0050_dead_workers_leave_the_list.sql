-- A worker whose heartbeat lapsed leaves the list of workers after a grace period
-- (list_workers gains p_dead_after_seconds), so its old signature goes. Nothing is deleted:
-- its row stays for `charter workers --all`, and what it held returns through its leases.
DROP FUNCTION IF EXISTS charter.list_workers(boolean);
