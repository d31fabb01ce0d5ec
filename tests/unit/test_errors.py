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
