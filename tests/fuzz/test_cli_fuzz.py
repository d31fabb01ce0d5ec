"""The ``charter`` command fed hostile arguments, in-process (``charter.cli.main``, fast)
and in real processes (arguments with bytes that are not UTF-8 arrive as lone surrogates).

Every outcome is an exit code: 0; 1 with ``error [CODE] message`` on stderr; 2 for a usage
error (argparse); 4 or 5 for a run that failed or a wait that timed out. Never a traceback.
As in a real process, standard output is strict UTF-8 and standard error escapes what it
cannot encode. A command refused (1 or 2) writes nothing: every table hashes the same.
"""

from __future__ import annotations

import io
import json
import logging
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from charter import Client
from charter.cli import main
from charter.library.templates import TEMPLATES
from tests.flows_for_tests import analyze_site
from tests.fuzz.ledger import changed, record, table_hashes
from tests.fuzz.strategies import (
    ANY_CHARACTER,
    expressions,
    hostile_json,
    hostile_text,
    settings_for,
)
from tests.integration.helpers import charter_env


@dataclass
class Outcome:
    code: int | str | None
    out: str
    err: str

    def check(self) -> None:
        """The rule of the command line: a code, and a coded message for every error."""
        assert "Traceback" not in self.err, self.err
        assert self.code in (0, 1, 2, 4, 5), self
        if self.code == 1:  # `runs cancel A B` names the run: error A: [CODE] message
            assert re.search(r"^error (.*: )?\[[A-Z_]+\] ", self.err, re.MULTILINE), self
        if self.code == 2:
            assert "usage:" in self.err, self


def run_main(
    argv: list[str], stdin: str | bytes = "", *, db_url: str | None = None, bad: bool = True
) -> Outcome:
    """``charter ARGV`` in this process, with a real process's standard streams (as in a
    UTF-8 locale: strict UTF-8 in and out, errors escaped). With ``db_url``, a refusal must
    leave every table of that database as it was; ``bad`` counts the call as a bad input."""
    before = table_hashes(db_url) if db_url else {}
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(
        err_bytes, encoding="utf-8", errors="backslashreplace", write_through=True
    )
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    saved_stdin = sys.stdin
    data = stdin if isinstance(stdin, bytes) else stdin.encode("utf-8", "surrogatepass")
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="strict")
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code: int | str | None = main(argv)
            except SystemExit as exc:  # argparse: --help, usage errors
                code = exc.code
    finally:
        sys.stdin = saved_stdin
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
    outcome = Outcome(code, out_bytes.getvalue().decode(), err_bytes.getvalue().decode())
    outcome.check()
    if bad:
        record("cli", outcome.code in (1, 2))
    if db_url and outcome.code in (1, 2):
        assert changed(before, table_hashes(db_url)) == [], (argv, outcome)
    return outcome


def _json_text(ensure_ascii: bool) -> st.SearchStrategy[str]:
    return hostile_json.map(lambda v: json.dumps(v, ensure_ascii=ensure_ascii, default=repr))


json_arguments = st.one_of(
    _json_text(True),
    _json_text(False),
    st.sampled_from(
        [
            "{}",
            '{"entity": {"a": 1}}',
            '{"entity": {"a": "\\ud800"}}',
            '{"entity": {"a": "\\u0000"}}',
            '{"entity": {"a": NaN}}',
            '{"entity": {"a": 1e999}}',
            "[" * 5_000 + "]" * 5_000,
            '{"a":' * 150 + "1" + "}" * 150,
            "9" * 5_000,
            "@",
            "@/nonexistent.json",
            "@/",
            "@/dev/null",
            "@bad\x00path",
            "@bad\ud800path",
            "-",
            "",
            "{",
        ]
    ),
    hostile_text,
)
cli_text = st.one_of(hostile_text.filter(lambda s: "\x00" not in s), st.just("-x"))


@settings_for(80)
@given(
    expression=st.one_of(expressions, st.text(ANY_CHARACTER, max_size=20)),
    variables=json_arguments,
    schema=st.one_of(st.none(), json_arguments),
    stdin=st.one_of(st.just(""), _json_text(False), st.just("\ud800"), st.binary(max_size=20)),
)
def test_expr_answers_with_a_code(expression, variables, schema, stdin):
    if not isinstance(expression, str):
        return
    argv = ["expr", expression, "--vars", variables]
    run_main([*argv, *(["--schema", schema] if schema is not None else [])], stdin=stdin)


@settings_for(40)
@given(expression=expressions, variables=json_arguments)
def test_expr_in_sql_answers_with_a_code(db_url, expression, variables):
    if not isinstance(expression, str):
        return
    run_main(
        ["--database-url", db_url, "expr", expression, "--vars", variables, "--sql"],
        db_url=db_url,
    )


flow_specs = st.one_of(
    st.sampled_from(
        [
            "fuzz_cli",
            "no_such_flow",
            "tests.flows_for_tests:analyze_site",
            "tests.flows_for_tests:nothing_here",
            "tests.flows_for_tests",
            "no_such_module_at_all:flow",
            ":flow",
            "\udcff.flows",
            "flows\ud800:flow",
        ]
    ),
    cli_text.filter(lambda s: ":" not in s and "." not in s),
)


@pytest.fixture
def published(db_url):
    """A flow 'fuzz_cli' in the database, so `charter run fuzz_cli` gets as far as SQL."""
    from charter import Flow

    flow = Flow("fuzz_cli")
    flow.step(slug="say")(lambda run: run)
    with Client(db_url) as client:
        client.start(flow, "first", run_id="fuzz-cli-1")
        client.start(analyze_site(), {"pages": []}, run_id="fuzz-cli-deployed")
    return db_url


@settings_for(60)
@given(
    flow=flow_specs,
    input=json_arguments,
    run_id=st.one_of(st.none(), cli_text),
    wait=st.sampled_from([None, "0.01", "0", "-1", "nan", "abc", "1e-300"]),
    stdin=st.one_of(st.just(""), _json_text(False), st.binary(max_size=20)),
)
def test_run_answers_with_a_code(published, flow, input, run_id, wait, stdin):
    argv = ["--database-url", published, "run", flow, "--input", input]
    argv += ["--run-id", run_id] if run_id is not None else []
    argv += ["--wait", "--timeout", wait] if wait is not None else []
    run_main(argv, stdin=stdin, db_url=published)


@settings_for(60)
@given(
    command=st.sampled_from(["status", "status --json", "runs cancel", "runs retry"]),
    run_ids=st.lists(st.one_of(cli_text, st.just("fuzz-cli-1")), min_size=1, max_size=3),
)
def test_run_commands_answer_with_a_code(published, command, run_ids):
    argv = ["--database-url", published, *command.split()]
    run_ids = run_ids[:1] if command.startswith("status") else run_ids
    # `runs cancel A B` cancels A even when B is refused: only a command naming no real run
    # must write nothing.
    run_main([*argv, *run_ids], db_url=None if "fuzz-cli-1" in run_ids else published)


@settings_for(60)
@given(
    flow=st.one_of(st.none(), cli_text),
    status=st.one_of(st.none(), st.sampled_from(["running", "failed"]), cli_text),
    limit=st.one_of(st.none(), st.sampled_from(["1", "0", "-1", "10001", "9" * 30, "x"])),
    after=st.one_of(st.none(), st.just("fuzz-cli-1"), cli_text),
    as_json=st.booleans(),
)
def test_runs_list_answers_with_a_code(published, flow, status, limit, after, as_json):
    argv = ["--database-url", published, "runs", "list"]
    for option, value in (("--flow", flow), ("--status", status), ("--limit", limit),
                          ("--after", after)):  # fmt: skip
        argv += [option, value] if value is not None else []
    run_main(argv + (["--json"] if as_json else []), db_url=published)


@settings_for(30)
@given(slug=cli_text, name=st.one_of(st.sampled_from(sorted(TEMPLATES)), cli_text))
def test_other_commands_answer_with_a_code(db_url, slug, name):
    run_main(["--database-url", db_url, "flows", "delete", slug, "--yes", "--force"], db_url=db_url)
    run_main(["templates", name])
    run_main(["--database-url", db_url, "queue"], bad=False)
    run_main(["--database-url", db_url, "workers", "--all", "--json"], bad=False)


@settings_for(30)
@given(version_id=hostile_text.filter(lambda s: "\x00" not in s and s.isprintable()))
def test_lineage_of_an_unknown_version_answers_with_a_code(db_url, version_id):
    try:
        version_id.encode("utf-8")
    except UnicodeEncodeError:
        return  # see test_lineage_with_a_surrogate_answers_with_a_code
    run_main(["--database-url", db_url, "lineage", version_id], db_url=db_url)


@pytest.mark.parametrize("version_id", ["v\udcff", "v\x00"])
def test_lineage_with_a_surrogate_answers_with_a_code(db_url, version_id):
    run_main(["--database-url", db_url, "lineage", version_id])


def _document(tmp_path: Path, name: str, content: str) -> str:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8", errors="surrogatepass")
    return str(path)


@settings_for(40)
@given(
    contract=st.sampled_from(
        [
            json.dumps(TEMPLATES["invoice_approval"].contract),
            json.dumps(TEMPLATES["invoice_approval"].contract).replace("draft", "dr\\udcffaft"),
            json.dumps(TEMPLATES["invoice_approval"].contract).replace('"reject"', '"\\ud800"'),
            "a: " + "[" * 300 + "]" * 300,  # 5,000 deep: test_documents_fuzz, real processes
            "{" * 3,
            "",
        ]
    ),
    org=st.one_of(
        st.none(),
        st.sampled_from(
            [
                json.dumps(TEMPLATES["invoice_approval"].org),
                json.dumps(TEMPLATES["invoice_approval"].org).replace("10000", "1e999"),
                json.dumps(TEMPLATES["invoice_approval"].org).replace(
                    "entity.grand_total > 10000", "entity.grand_total == '\\\\ud800'"
                ),
                "[]",
                "null",
            ]
        ),
    ),
    mode=st.sampled_from([[], ["--diff"], ["--mermaid"], ["--envelope"], ["--diff", "--mermaid"]]),
    suffix=st.sampled_from([".json", ".yaml", ""]),
)
def test_compile_effective_answers_with_a_code(tmp_path, contract, org, mode, suffix):
    argv = ["compile-effective", _document(tmp_path, f"contract{suffix}", contract)]
    argv += [_document(tmp_path, f"org{suffix}", org)] if org is not None else []
    run_main(argv + mode)


def test_compile_effective_with_paths_that_cannot_be_read(tmp_path):
    for path in ["/nonexistent.yaml", "/", "bad\udcffpath.json", "bad\ud800path.json"]:
        assert run_main(["compile-effective", path]).code == 1


def test_the_issue_in_process(db_url, published):
    """The cases of the issue: a lone surrogate in a run input, NUL in a run id or slug,
    `expr --sql` with a surrogate in --vars, YAML nested 5,000 deep."""
    url = ["--database-url", published]
    outcome = run_main([*url, "run", "fuzz_cli", "--input", '{"name": "caf\\udce9"}'])
    assert outcome.code == 1 and "RUN_INPUT_INVALID" in outcome.err
    outcome = run_main([*url, "run", "fuzz_cli", "--input", '"caf\udce9"'])
    assert outcome.code == 1 and "lone surrogate" in outcome.err
    outcome = run_main([*url, "run", "fuzz_cli", "--run-id", "a\x00b"])
    assert outcome.code == 1 and "U+0000" in outcome.err
    outcome = run_main([*url, "run", "fuzz\x00cli"])  # not a slug: a module to import
    assert outcome.code == 1 and "FLOW_LOAD_FAILED" in outcome.err
    vars_ = '{"entity": {"a": "\\ud800"}}'
    for sql in ([], ["--sql"]):
        outcome = run_main([*url, "expr", "entity.a == 'x'", "--vars", vars_, *sql])
        assert outcome.code == 1 and "ARGUMENT_INVALID" in outcome.err, outcome
    outcome = run_main([*url, "expr", "entity.a == 'caf\udce9'"])
    assert outcome.code == 1 and "EXPR_SYNTAX" in outcome.err, outcome


# Real processes: the operating system hands the arguments over as bytes; bytes that are
# not UTF-8 become lone surrogates (\udcff for 0xff) in sys.argv.
SURROGATE = "\udcff"


def _env() -> dict[str, str]:
    """A UTF-8 terminal's settings: standard input and output strict UTF-8 (as in
    en_US.UTF-8; Python is lenient only in the C locale), standard error escaping."""
    return charter_env(LC_ALL="C.UTF-8", PYTHONIOENCODING="utf-8:strict")


def _run_all(
    argvs: list[list[str]], env: dict[str, str], stdins: list[bytes] | None = None
) -> list[Outcome]:
    """Run several `python -m charter` at once (each takes a second to start)."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "charter", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.PIPE,
            env=env,
        )
        for argv in argvs
    ]
    outcomes = []
    for process, stdin in zip(processes, stdins or [b""] * len(argvs), strict=True):
        out, err = process.communicate(stdin, timeout=120)
        outcomes.append(
            Outcome(
                process.returncode,
                out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"),
            )
        )
    return outcomes


def test_real_processes_answer_surrogate_arguments_with_a_code(published, tmp_path):
    contract = tmp_path / f"contract{SURROGATE}.yaml"
    contract.write_text("a: " + "[" * 5_000 + "]" * 5_000)
    escaped = tmp_path / "escaped.json"
    escaped.write_text(
        json.dumps(TEMPLATES["invoice_approval"].contract).replace('"reject"', '"\\udcff"')
    )
    url = ["--database-url", published]
    cases = {
        "expr": ["expr", f"entity.a == '{SURROGATE}'"],
        "expr --vars": ["expr", "entity.a == 'x'", "--vars",
                        f'{{"entity": {{"a": "{SURROGATE}"}}}}'],
        "expr --vars --sql": [*url, "expr", "entity.a == 'x'", "--sql", "--vars",
                              f'{{"entity": {{"a": "{SURROGATE}"}}}}'],
        "expr --schema": ["expr", "entity.a == 1", "--schema",
                          f'{{"entity": {{"{SURROGATE}": "number"}}}}'],
        "expr --schema --sql": [*url, "expr", "entity.a == 1", "--sql", "--schema",
                                f'{{"entity": {{"a{SURROGATE}": "number"}}}}'],
        "compile-effective deep": ["compile-effective", str(contract)],
        "compile-effective escaped": ["compile-effective", str(escaped)],
        "compile-effective missing": ["compile-effective", f"/nonexistent/{SURROGATE}.yaml"],
        "run --input": [*url, "run", "fuzz_cli", "--input", f'"{SURROGATE}"'],
        "run slug": [*url, "run", f"fuzz{SURROGATE}"],
        "run --run-id": [*url, "run", "fuzz_cli", "--run-id", f"id{SURROGATE}"],
        "status": [*url, "status", f"run{SURROGATE}"],
        "runs list --after": [*url, "runs", "list", "--after", f"run{SURROGATE}"],
        "runs list --flow": [*url, "runs", "list", "--flow", SURROGATE],
        "runs cancel": [*url, "runs", "cancel", SURROGATE],
        "templates": ["templates", SURROGATE],
        "run --input - (not UTF-8)": [*url, "run", "fuzz_cli", "--input", "-"],
        "expr --vars - (not UTF-8)": ["expr", "entity.a == 1", "--vars", "-"],
    }  # fmt: skip
    stdins = [b"\xff\xfe" if name.endswith("(not UTF-8)") else b"" for name in cases]
    outcomes = _run_all(list(cases.values()), _env(), stdins)
    for (name, _), outcome in zip(cases.items(), outcomes, strict=True):
        assert outcome.code == 1, (name, outcome)
        outcome.check()


def test_a_real_lineage_with_a_surrogate_answers_with_a_code(db_url):
    [outcome] = _run_all([["--database-url", db_url, "lineage", f"v{SURROGATE}"]], _env())
    assert "Traceback" not in outcome.err and outcome.code == 1, outcome


@pytest.mark.parametrize("port", ["70000", "65536", "0", "-1", "abc", "8400.5", "9" * 50, ""])
def test_serve_on_a_port_that_is_none_is_a_usage_error(port, monkeypatch):
    outcome = run_main(["serve", "--port", port])
    assert outcome.code == 2 and "is not a TCP port" in outcome.err, outcome
    monkeypatch.setenv("CHARTER_PORT", port or " ")
    if port:  # the variable gives the default, checked the same way
        outcome = run_main(["serve"])
        assert outcome.code == 2 and "is not a TCP port" in outcome.err, outcome
