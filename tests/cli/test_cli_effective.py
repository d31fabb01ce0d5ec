"""`charter compile-effective`, `charter expr` and `charter templates`."""

import json
import subprocess
import sys

import pytest
import yaml

from charter.library.templates import TEMPLATES
from tests.integration.helpers import charter_env


def _charter(*args, env=None, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "charter", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env or charter_env(),
        cwd=cwd,
    )


@pytest.fixture
def files(tmp_path):
    template = TEMPLATES["invoice_approval"]
    (tmp_path / "contract.json").write_text(json.dumps(template.contract))
    (tmp_path / "org.yaml").write_text(yaml.safe_dump(template.org))
    (tmp_path / "contract.yml").write_text(yaml.safe_dump(template.contract))
    return tmp_path


def test_compile_effective_prints_the_compiled_workflow_from_json_or_yaml(files):
    from_json = _charter("compile-effective", str(files / "contract.json"), str(files / "org.yaml"))
    assert from_json.returncode == 0, from_json.stderr
    compiled = json.loads(from_json.stdout)
    assert compiled["kind"] == "effective" and len(compiled["hash"]) == 64
    from_yaml = _charter("compile-effective", str(files / "contract.yml"), str(files / "org.yaml"))
    assert json.loads(from_yaml.stdout)["hash"] == compiled["hash"]
    bare = json.loads(_charter("compile-effective", str(files / "contract.json")).stdout)
    assert bare["hash"] != compiled["hash"]


def test_compile_effective_diff_mermaid_and_envelope(files):
    diff = json.loads(
        _charter(
            "compile-effective", str(files / "contract.json"), str(files / "org.yaml"), "--diff"
        ).stdout
    )
    assert list(diff["slots"]) == ["slot:submitted_to_approved"]
    mermaid = _charter(
        "compile-effective", str(files / "contract.json"), str(files / "org.yaml"), "--mermaid"
    ).stdout
    assert mermaid.startswith("flowchart TD")
    envelope = json.loads(
        _charter("compile-effective", str(files / "contract.json"), "--envelope").stdout
    )
    assert envelope["kind"] == "envelope" and envelope["entityType"] == "invoice"


def test_invalid_input_exits_non_zero_with_code_and_message_only(files):
    org = yaml.safe_load((files / "org.yaml").read_text())
    org["slots"]["slot:submitted_to_approved"]["edges"].append(
        {
            "id": "sneak",
            "sourceNodeId": "usr:slot:submitted_to_approved:standard",
            "targetNodeId": "sys:state:active",
        }
    )
    (files / "bad.json").write_text(json.dumps(org))
    result = _charter("compile-effective", str(files / "contract.json"), str(files / "bad.json"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("error [SLOT_EDGE_OUT_OF_SCOPE]")
    assert "Traceback" not in result.stderr
    (files / "broken.json").write_text("{not json")
    broken = _charter("compile-effective", str(files / "broken.json"))
    assert broken.returncode == 1 and "CONFIG_INVALID" in broken.stderr
    assert "line 1" in broken.stderr
    missing = _charter("compile-effective", str(files / "nope.json"))
    assert missing.returncode == 1 and "Cannot read the contract file" in missing.stderr


def test_expr_evaluates_in_python_and_in_sql(db_url):
    args = [
        "expr",
        "entity.total > 100 && actor.roles contains 'cfo'",
        "--vars",
        json.dumps({"entity": {"total": 250}, "actor": {"roles": ["cfo"]}}),
    ]
    in_python = _charter(*args)
    assert in_python.returncode == 0, in_python.stderr
    audit = json.loads(in_python.stdout)
    assert audit == {
        "expression": args[1],
        "result": True,
        "variables": {"entity.total": 250, "actor.roles": ["cfo"]},
    }
    in_sql = _charter(*args, "--sql", env=charter_env(CHARTER_DATABASE_URL=db_url))
    assert in_sql.returncode == 0, in_sql.stderr
    assert json.loads(in_sql.stdout) == audit


def test_expr_rejections_show_the_position_and_the_rule():
    result = _charter("expr", "entity.name =~ 'a.*'")
    assert result.returncode == 1 and result.stdout == ""
    assert "EXPR_FORBIDDEN" in result.stderr and "column 13" in result.stderr
    schema = _charter("expr", "entity.totl > 1", "--schema", '{"entity": {"total": "number"}}')
    assert "EXPR_UNKNOWN_VARIABLE" in schema.stderr and "declared: total" in schema.stderr
    bad_vars = _charter("expr", "true", "--vars", "{nope")
    assert bad_vars.returncode == 1 and "--vars is not valid JSON" in bad_vars.stderr


def test_templates_are_listed_and_printed():
    listed = _charter("templates")
    assert listed.returncode == 0
    assert [line.split(":")[0] for line in listed.stdout.splitlines()] == list(TEMPLATES)
    one = json.loads(_charter("templates", "amendment_loop").stdout)
    assert set(one) == {"contract", "org"}
    missing = _charter("templates", "nope")
    assert missing.returncode == 1 and "CONFIG_INVALID" in missing.stderr
