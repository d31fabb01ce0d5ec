import inspect

import pytest

from charter import errors
from charter.db.connection import check_server_version


def _error_classes():
    return [
        obj
        for _, obj in inspect.getmembers(errors, inspect.isclass)
        if issubclass(obj, errors.CharterError)
    ]


def test_every_error_class_has_its_own_stable_code():
    codes = [cls.code for cls in _error_classes()]
    assert len(codes) == len(set(codes))
    for code in codes:
        assert code.isupper()
        assert " " not in code


def test_error_tree_in_the_module_docstring_names_every_class():
    for cls in _error_classes():
        assert cls.__name__ in (errors.__doc__ or "")


def test_message_and_code_are_kept_and_shown():
    exc = errors.MigrationChecksumError("file x changed; restore it")
    assert exc.code == "MIGRATION_CHECKSUM_MISMATCH"
    assert str(exc) == "[MIGRATION_CHECKSUM_MISMATCH] file x changed; restore it"


def test_a_server_older_than_15_is_refused_with_the_fix():
    with pytest.raises(errors.DatabaseVersionError) as caught:
        check_server_version(140011, "db.example:5432/app")
    assert "version 14" in caught.value.message
    assert "PostgreSQL 15 or newer" in caught.value.message
    check_server_version(150000, "ok")
    check_server_version(180006, "ok")


def test_every_sqlstate_raised_in_sql_has_its_class():
    import re
    from importlib import resources

    sql = resources.files("charter.db").joinpath("sql")
    raised = set()
    for folder in ("functions", "triggers"):
        for file in sql.joinpath(folder).iterdir():
            raised |= set(re.findall(r"ERRCODE\s*=\s*'(CH\d{3})'", file.read_text("utf-8")))
    assert raised  # the scan found charter's own SQLSTATEs
    missing = sorted(state for state in raised if errors.for_sqlstate(state) is None)
    assert missing == []


def test_one_code_one_class_and_a_family_raised_with_a_rule_code_is_that_rule():
    codes = [cls.code for cls in errors.all_errors()]
    assert len(codes) == len(set(codes))
    exc = errors.ContractError("no such slot", code="SLOT_UNKNOWN")
    assert type(exc) is errors.SlotUnknownError and exc.code == "SLOT_UNKNOWN"
    assert isinstance(errors.FlowDefinitionError("x", code="WORKFLOW_CYCLE"), errors.ContractError)
    with pytest.raises(TypeError):
        errors.ContractError("x", code="RUN_NOT_FOUND")  # not a contract rule
    with pytest.raises(TypeError):

        class Twice(errors.CharterError, code="RUN_NOT_FOUND"):
            pass


def test_errors_pickle_as_their_class():
    import pickle

    exc = pickle.loads(pickle.dumps(errors.ContractError("m", code="SLOT_UNKNOWN")))
    assert type(exc) is errors.SlotUnknownError and exc.message == "m"


def test_the_docs_error_table_is_generated_from_the_classes():
    from pathlib import Path

    page = Path(__file__).parents[1] / "docs" / "errors.md"
    assert page.read_text("utf-8") == errors.errors_document(), (
        "docs/errors.md is stale: run `charter errors > docs/errors.md`"
    )
