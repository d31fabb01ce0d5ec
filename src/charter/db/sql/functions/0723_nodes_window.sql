-- The edit window a document is in (seed 002): with an active workflow instance, the
-- strictest window of its current nodes in the compiled editWindows (_nodes_window);
-- otherwise (no instance, or one at no node that declares a window) its state's window from
-- the contract (_state_window). Both are SQL-standard bodies without a SET clause, which
-- PostgreSQL inlines where they are called: mutate() reads the instance with the document
-- and decides without a call.
CREATE OR REPLACE FUNCTION charter._nodes_window(p_nodes text[], p_windows jsonb)
RETURNS text
LANGUAGE sql
STABLE
RETURN CASE
    -- A jsonpath == is true when any of the nodes matches. Strict, and silent on errors: a
    -- window that is not a string, or windows that are not an object, count as none.
    WHEN jsonb_path_exists(p_windows, 'strict $.keyvalue() ? (@.key == $nodes[*] && @.value == "locked")',
                           jsonb_build_object('nodes', to_jsonb(p_nodes)), true) THEN 'locked'
    WHEN jsonb_path_exists(p_windows, 'strict $.keyvalue() ? (@.key == $nodes[*] && @.value == "amend_only")',
                           jsonb_build_object('nodes', to_jsonb(p_nodes)), true) THEN 'amend_only'
    WHEN jsonb_path_exists(p_windows, 'strict $.keyvalue() ? (@.key == $nodes[*] && @.value == "editable")',
                           jsonb_build_object('nodes', to_jsonb(p_nodes)), true) THEN 'editable' END;
