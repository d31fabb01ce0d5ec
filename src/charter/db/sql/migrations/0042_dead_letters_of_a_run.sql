-- list_dead_letters lists one run's dead letters too (the run page links to them): the
-- function gains a parameter, so its old signature goes.
DROP FUNCTION IF EXISTS charter.list_dead_letters(text, integer);
