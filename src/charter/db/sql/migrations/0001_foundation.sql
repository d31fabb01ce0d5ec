-- The charter schema and the record of what was applied to it.
CREATE SCHEMA IF NOT EXISTS charter;

CREATE TABLE charter.schema_migrations (
    name            text        NOT NULL,
    kind            text        NOT NULL,
    version         text,
    checksum        text        NOT NULL,
    charter_version text        NOT NULL,
    applied_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT schema_migrations_pkey PRIMARY KEY (name),
    CONSTRAINT kind_is_known CHECK (kind IN ('versioned', 'repeatable')),
    CONSTRAINT versioned_has_version CHECK ((kind = 'versioned') = (version IS NOT NULL)),
    CONSTRAINT checksum_is_sha256 CHECK (checksum ~ '^[0-9a-f]{64}$')
);

COMMENT ON TABLE charter.schema_migrations IS
    'One row per applied migration file (versioned, applied once) and per function or trigger file (repeatable, re-applied when its checksum changes).';
