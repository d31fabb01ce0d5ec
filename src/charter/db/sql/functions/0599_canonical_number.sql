-- Canonical JSON (seed 002 § Canonical JSON Hashing), the SQL twin of charter.canonical:
-- keys sorted recursively, no whitespace, strings escaped as JSON writes them, numbers as
-- ECMAScript writes them. Used to recompute a compiled artifact's hash at publish
-- (charter._verify_effective). Keys are sorted by UTF-8 bytes, which is the UTF-16 order of
-- charter.canonical except between characters above U+FFFF and U+E000..U+FFFF: a key mixing
-- those hashes differently here, so such an artifact is refused, never wrongly accepted.
CREATE OR REPLACE FUNCTION charter._canonical_number(p_value numeric)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_text   text := abs(p_value)::text;
    v_int    text := split_part(v_text, '.', 1);
    v_frac   text := split_part(v_text, '.', 2);
    v_digits text;
    v_point  integer;
    v_k      integer;
    v_out    text;
BEGIN
    IF p_value = 0 THEN
        RETURN '0';
    END IF;
    IF ltrim(v_int, '0') <> '' THEN
        v_digits := ltrim(v_int || v_frac, '0');
        v_point := length(ltrim(v_int, '0'));
    ELSE
        v_digits := ltrim(v_frac, '0');
        v_point := -(length(v_frac) - length(ltrim(v_frac, '0')));
    END IF;
    v_digits := coalesce(nullif(rtrim(v_digits, '0'), ''), '0');
    v_k := length(v_digits);
    IF v_k <= v_point AND v_point <= 21 THEN
        v_out := v_digits || repeat('0', v_point - v_k);
    ELSIF 0 < v_point AND v_point <= 21 THEN
        v_out := substr(v_digits, 1, v_point) || '.' || substr(v_digits, v_point + 1);
    ELSIF -6 < v_point AND v_point <= 0 THEN
        v_out := '0.' || repeat('0', -v_point) || v_digits;
    ELSE
        v_out := substr(v_digits, 1, 1)
                 || CASE WHEN v_k > 1 THEN '.' || substr(v_digits, 2) ELSE '' END
                 || 'e' || CASE WHEN v_point - 1 >= 0 THEN '+' ELSE '-' END || abs(v_point - 1)::text;
    END IF;
    RETURN CASE WHEN p_value < 0 THEN '-' ELSE '' END || v_out;
END;
$$;
