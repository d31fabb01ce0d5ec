-- cancel_run names who cancels and why (a document's instance records them in its audit
-- row): the function gains two parameters, so its old signature goes.
DROP FUNCTION IF EXISTS charter.cancel_run(text, text);
