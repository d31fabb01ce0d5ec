"""Every error charter raises, with a stable machine-readable ``code``.

The tree::

    CharterError                      base; .code, .message (what was wrong and how to fix it)
    ├── ConfigurationError            CONFIG_INVALID: a setting or environment variable is wrong
    ├── DatabaseError                 anything about reaching or using PostgreSQL
    │   ├── DatabaseUnreachableError  DATABASE_UNREACHABLE
    │   ├── DatabaseVersionError      DATABASE_VERSION_UNSUPPORTED (older than PostgreSQL 15)
    │   └── EmbeddedDatabaseError     EMBEDDED_DATABASE_FAILED (and the codes below)
    │       ├── DataDirectoryError    EMBEDDED_DATA_DIR_UNUSABLE
    │       └── PortInUseError        EMBEDDED_PORT_IN_USE
    ├── MigrationError                MIGRATION_FAILED
    │   ├── MigrationChecksumError    MIGRATION_CHECKSUM_MISMATCH
    │   └── MigrationUnknownError     MIGRATION_UNKNOWN (database is newer than this charter)
    └── CanonicalJsonError            JSON_NOT_STABLE

Errors raised inside SQL use SQLSTATE class ``CH`` (see ``charter.db.sqlstate``) and map
back to one subclass each, so callers match on ``code``, never on message text.
"""

from __future__ import annotations


class CharterError(Exception):
    """Base of all charter errors. ``code`` is stable; ``message`` is for people."""

    code: str = "CHARTER_ERROR"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class ConfigurationError(CharterError):
    code = "CONFIG_INVALID"


class DatabaseError(CharterError):
    code = "DATABASE_ERROR"


class DatabaseUnreachableError(DatabaseError):
    code = "DATABASE_UNREACHABLE"


class DatabaseVersionError(DatabaseError):
    code = "DATABASE_VERSION_UNSUPPORTED"


class EmbeddedDatabaseError(DatabaseError):
    code = "EMBEDDED_DATABASE_FAILED"


class DataDirectoryError(EmbeddedDatabaseError):
    code = "EMBEDDED_DATA_DIR_UNUSABLE"


class PortInUseError(EmbeddedDatabaseError):
    code = "EMBEDDED_PORT_IN_USE"


class MigrationError(CharterError):
    code = "MIGRATION_FAILED"


class MigrationChecksumError(MigrationError):
    code = "MIGRATION_CHECKSUM_MISMATCH"


class MigrationUnknownError(MigrationError):
    code = "MIGRATION_UNKNOWN"


class CanonicalJsonError(CharterError, ValueError):
    code = "JSON_NOT_STABLE"
