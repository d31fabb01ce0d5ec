-- The claim's limits, for the candidate tasks p_ids of org p_org (locked by the claim, in
-- claim order): returns those that may start now.
--   Concurrency: per key, at most limit_max tasks run at once (started, lease not expired).
--   The key's advisory lock serialises the count with every other claimer; a key another
--   claimer holds is left for the next claim.
--   Rate limits: a token bucket per (org, key) in charter.rate_buckets, refilled at
--   perSecond up to burst. A task that finds no token is queued again for when its token
--   will be there, so it is visibly waiting, not failed and not rescanned meanwhile.
CREATE OR REPLACE FUNCTION charter._admit_limited(p_ids bigint[], p_org text)
RETURNS bigint[]
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_ids     bigint[] := p_ids;
    v_group   record;
    v_keys    text[];
    v_refused bigint[];
    v_bucket  charter.rate_buckets;
    v_burst   double precision;
    v_tokens  double precision;
    v_take    integer;
BEGIN
    -- Set-based: lock the keys first (one statement), then count and rank in the next one,
    -- whose fresh snapshot sees every claim committed before the locks were ours.
    SELECT coalesce(array_agg(k.limit_key), '{}') INTO v_keys FROM (
        SELECT DISTINCT t.limit_key FROM charter.tasks AS t
         WHERE t.id = ANY (p_ids) AND t.org_id = p_org AND t.limit_key IS NOT NULL
         ORDER BY t.limit_key) AS k
     WHERE pg_try_advisory_xact_lock(charter._lock_key('concurrency', k.limit_key));
    SELECT coalesce(array_agg(c.id), '{}') INTO v_refused FROM (
        SELECT t.id, t.org_id, t.limit_key, t.limit_max,
               row_number() OVER (PARTITION BY t.limit_key ORDER BY array_position(p_ids, t.id)) AS n
          FROM charter.tasks AS t
         WHERE t.id = ANY (p_ids) AND t.org_id = p_org AND t.limit_key IS NOT NULL) AS c
     WHERE NOT (c.limit_key = ANY (v_keys))
        OR c.n > c.limit_max - (SELECT count(*) FROM charter.tasks AS r
                                 WHERE r.limit_key = c.limit_key AND r.org_id = p_org
                                   AND r.status = 'started'
                                   AND r.available_at > now());
    v_ids := ARRAY(SELECT i FROM unnest(v_ids) AS i WHERE i <> ALL (v_refused));

    -- A key named by several steps (of one flow or of many) is one bucket, filled at the
    -- lowest rate and burst those steps ask for: the strictest quota holds.
    FOR v_group IN
        SELECT t.org_id, t.rate_key,
               min((r.rate->>'perSecond')::double precision) AS per_second,
               min(coalesce((r.rate->>'burst')::double precision,
                            greatest(1, ceil((r.rate->>'perSecond')::double precision)))) AS burst,
               array_agg(t.id ORDER BY array_position(p_ids, t.id)) AS ids
          FROM charter.tasks AS t
          JOIN charter.flow_steps AS s ON s.version_id = t.version_id AND s.slug = t.step_slug
          JOIN charter.workflow_versions AS v ON v.id = t.version_id
         CROSS JOIN LATERAL (SELECT coalesce(s.opt_limits->'rateLimit', v.opt_limits->'rateLimit') AS rate) AS r
         WHERE t.id = ANY (v_ids) AND t.org_id = p_org AND t.rate_key IS NOT NULL
         GROUP BY t.org_id, t.rate_key ORDER BY t.org_id, t.rate_key
    LOOP
        v_burst := v_group.burst;
        INSERT INTO charter.rate_buckets (org_id, bucket_key, tokens)
        VALUES (v_group.org_id, v_group.rate_key, v_burst)
        ON CONFLICT DO NOTHING;
        SELECT * INTO v_bucket FROM charter.rate_buckets AS b
         WHERE b.org_id = v_group.org_id AND b.bucket_key = v_group.rate_key
           FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN  -- another claimer is taking tokens of this bucket right now
            v_ids := ARRAY(SELECT i FROM unnest(v_ids) AS i WHERE i <> ALL (v_group.ids));
            CONTINUE;
        END IF;
        v_tokens := least(v_burst, v_bucket.tokens
                          + extract(epoch FROM now() - v_bucket.refilled_at) * v_group.per_second);
        v_take := least(floor(v_tokens)::integer, cardinality(v_group.ids));
        UPDATE charter.rate_buckets AS b SET tokens = v_tokens - v_take, refilled_at = now()
         WHERE b.org_id = v_group.org_id AND b.bucket_key = v_group.rate_key;
        -- The rest wait for their tokens: the n-th of them when the n-th next token is in.
        UPDATE charter.tasks AS t
           SET available_at = now() + make_interval(secs =>
                   (w.n - (v_tokens - v_take)) / v_group.per_second)
          FROM unnest(v_group.ids[v_take + 1:]) WITH ORDINALITY AS w(id, n)
         WHERE t.id = w.id AND t.org_id = p_org AND t.status = 'queued';
        v_ids := ARRAY(SELECT i FROM unnest(v_ids) AS i WHERE i <> ALL (v_group.ids[v_take + 1:]));
    END LOOP;
    RETURN v_ids;
END;
$$;
