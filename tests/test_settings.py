"""All configuration goes through charter.settings: no other module reads the environment,
and a worker's channels come from its WorkerSettings, whose defaults are the variables."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from charter.errors import ConfigurationError
from charter.worker.deliveries import Channels, channel_types
from charter.worker.runner import WorkerSettings

SRC = Path(__file__).resolve().parents[1] / "src" / "charter"
ONLY_READER = SRC / "settings.py"


def _environment_reads(path: Path) -> list[int]:
    """Lines that name ``os.environ``, ``os.getenv``, ``os.putenv`` or import them."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv"):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            names = {alias.name for alias in node.names}
            lines += [node.lineno] if names & {"environ", "getenv", "putenv"} else []
    return lines


def test_only_settings_reads_the_environment():
    found = {
        f"{path.relative_to(SRC)}:{line}"
        for path in SRC.rglob("*.py")
        if path != ONLY_READER
        for line in _environment_reads(path)
    }
    assert not found, (
        f"the environment is read outside charter/settings.py at {sorted(found)}: add a "
        "function for the variable to settings.py and call it"
    )


def test_the_check_finds_a_read():
    assert _environment_reads(SRC.parent.parent / "tests" / "test_settings.py") == []
    assert _environment_reads(SRC / "settings.py")


def test_worker_settings_default_to_the_environment_when_made(monkeypatch):
    monkeypatch.setenv("CHARTER_SMTP_URL", "smtp://127.0.0.1:9?from=a@localhost")
    monkeypatch.setenv("CHARTER_WEBHOOK_ALLOW", "10.0.0.0/8")
    monkeypatch.delenv("CHARTER_SMS_URL", raising=False)
    made = WorkerSettings()
    assert made.smtp_url == "smtp://127.0.0.1:9?from=a@localhost"
    assert made.webhook_allow == "10.0.0.0/8"
    assert made.sms_url is None and made.sms_provider == "twilio"
    monkeypatch.delenv("CHARTER_SMTP_URL")
    assert made.smtp_url is not None  # read once, when made


def test_channels_come_from_the_settings_not_the_environment(monkeypatch):
    for name in ("CHARTER_SMTP_URL", "CHARTER_SMS_URL", "CHARTER_WEBHOOK_ALLOW"):
        monkeypatch.delenv(name, raising=False)
    configured = WorkerSettings(
        smtp_url="smtp://127.0.0.1:9?from=demo@localhost&starttls=off",
        sms_url="http://AC1:t@127.0.0.1:9?from=%2B15550001111",
        webhook_allow="127.0.0.1/32",
    )
    channels = Channels.from_settings(configured)
    assert channels.email is not None and channels.email.settings.port == 9
    assert channels.sms is not None
    assert [str(n) for n in channels.webhook.policy.allow] == ["127.0.0.1/32"]
    assert channel_types(configured) == sorted(channels.claimable())
    assert "notification:email" in channel_types(configured)
    bare = WorkerSettings()
    assert Channels.from_settings(bare).email is None
    assert channel_types(bare) == ["db_function", "notification:in_app", "webhook"]
    assert channel_types(configured, documents=False) == []


def test_a_bad_setting_names_itself():
    with pytest.raises(ConfigurationError, match="CHARTER_WEBHOOK_ALLOW: 'ten'"):
        Channels.from_settings(WorkerSettings(webhook_allow="ten"))
