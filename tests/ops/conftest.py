"""The document runtime's fixtures (org acme with every use case, local mail and SMS
servers, a worker running the documents engine) for the tests below."""

from tests.runtime_fixtures import (  # noqa: F401 (fixtures)
    _mail_server,
    _sms_server,
    acme,
    engine,
    keys,
    mail,
    sms,
    sql,
)
