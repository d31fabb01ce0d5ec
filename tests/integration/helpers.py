"""Running the real ``charter`` command in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping


def charter_env(**overrides: str | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CHARTER_DATABASE_URL", "CHARTER_DATA_DIR", "CHARTER_EMBEDDED_PORT")
    }
    for key, value in overrides.items():
        if value is not None:
            env[key] = value
    return env


def run_charter(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "charter", *args],
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else charter_env(),
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def start_charter(*args: str, env: Mapping[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "charter", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env),
        stdin=subprocess.DEVNULL,
    )
