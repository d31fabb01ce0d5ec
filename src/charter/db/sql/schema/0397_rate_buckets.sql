-- Token buckets of rate limits, shared by every worker: tokens as of refilled_at.
CREATE TABLE charter.rate_buckets (
    org_id      text             NOT NULL,
    bucket_key  text             NOT NULL,
    tokens      double precision NOT NULL,
    refilled_at timestamptz      NOT NULL DEFAULT now(),
    CONSTRAINT rate_buckets_pkey PRIMARY KEY (org_id, bucket_key)
);
ALTER TABLE charter.rate_buckets ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.rate_buckets
    USING (org_id = current_setting('charter.org_id', true));
