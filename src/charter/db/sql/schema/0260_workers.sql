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
    CONSTRAINT workers_pkey PRIMARY KEY (id)
);

COMMENT ON TABLE charter.workers IS
    'Workers register at start and heartbeat; stopped_at is set on a clean exit.';
