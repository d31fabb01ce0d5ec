CREATE TABLE charter.workers (
    id                text        NOT NULL,
    org_id            text        NOT NULL DEFAULT 'default',
    hostname          text        NOT NULL,
    pid               integer     NOT NULL,
    flows             text[]      NOT NULL,
    concurrency       integer     NOT NULL,
    started_at        timestamptz NOT NULL DEFAULT now(),
    last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
    stopped_at        timestamptz,
    versions          text[]      NOT NULL DEFAULT '{}',
    lease_seconds     integer     NOT NULL DEFAULT 30,
    orgs              text[],
    channels          text[],
    CONSTRAINT workers_pkey PRIMARY KEY (id),
    CONSTRAINT worker_lease_is_positive CHECK (lease_seconds >= 1)
);

COMMENT ON TABLE charter.workers IS
    'Workers register at start and heartbeat; versions are the flow versions their code can run; stopped_at is set on a clean exit.';
COMMENT ON COLUMN charter.workers.orgs IS
    'The orgs the worker serves (charter worker --org), or NULL for every org.';
COMMENT ON COLUMN charter.workers.channels IS
    'What the worker can send, as claim_side_effects names it (notification:email, …); NULL for a worker that has not said (it may send anything).';
