CREATE TABLE charter.directory_orgs (
    org_id     text        NOT NULL,
    data       jsonb       NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT directory_orgs_pkey PRIMARY KEY (org_id),
    CONSTRAINT org_data_is_an_object CHECK (jsonb_typeof(data) = 'object')
);

COMMENT ON TABLE charter.directory_orgs IS 'Org data that expressions read as org.*.';
