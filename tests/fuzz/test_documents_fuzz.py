"""Contract and org definition files, malformed in every way a file can be: each is read,
compiled and printed, or refused with a CharterError naming the file."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.dsl.contract import EntityContract
from charter.dsl.files import read_document
from charter.errors import CharterError, ConfigurationError
from charter.library.templates import TEMPLATES
from tests.fuzz.strategies import (
    ANY_CHARACTER,
    Big,
    charter_error_or_result,
    hostile_json,
    settings_for,
)

TEMPLATE = TEMPLATES["invoice_approval"]
CONTRACT_JSON = json.dumps(TEMPLATE.contract)
ORG_JSON = json.dumps(TEMPLATE.org)
CONTRACT_YAML = yaml.safe_dump(TEMPLATE.contract)


def laughs(levels: int) -> str:
    """The "billion laughs": each level refers nine times to the one before."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for n in range(1, levels):
        refs = ", ".join([f"*a{n - 1}"] * 9)
        lines.append(f"a{n}: &a{n} [{refs}]")
    return "\n".join(lines) + "\n"


def nested_yaml_block(depth: int) -> str:
    return "".join(f"{' ' * (2 * n)}k:\n" for n in range(depth)) + " " * (2 * depth) + "v\n"


# Each a text (or bytes) that a user could put in a file: broken, huge, deep, or sly.
SPECIMENS: dict[str, str | bytes] = {
    "empty": "",
    "null": "null",
    "yaml null": "~\n",
    "only a comment": "# nothing\n",
    "a number": "42",
    "a list": "[1, 2]",
    "a string": '"contract"',
    "bom json": "\ufeff" + CONTRACT_JSON,
    "truncated json": CONTRACT_JSON[: len(CONTRACT_JSON) // 2],
    "json with NaN": CONTRACT_JSON.replace('"version": 1', '"version": NaN'),
    "json with 1e999": CONTRACT_JSON.replace('"version": 1', '"version": 1e999'),
    "json with a huge integer": CONTRACT_JSON.replace('"version": 1', '"version": ' + "9" * 5000),
    "json escaped NUL": CONTRACT_JSON.replace('"invoice"', '"invoice\\u0000"'),
    "json escaped surrogate": CONTRACT_JSON.replace('"invoice"', '"invoice\\ud800"'),
    "json surrogate in a label": CONTRACT_JSON.replace('"approved"', '"\\udcff"'),
    "json surrogate in a key": CONTRACT_JSON.replace('"fields"', '"f\\udcffields"'),
    "json trailing newline id": CONTRACT_JSON.replace('"invoice"', '"invoice\\n"'),
    "json deep 5,000": "[" * 5_000 + "]" * 5_000,
    "json deep 500": '{"a":' * 500 + "1" + "}" * 500,
    "json deep 150 in fields": CONTRACT_JSON[:-1] + ', "x": ' + "[" * 150 + "]" * 150 + "}",
    "json duplicate keys": '{"entityType": "a", "entityType": "b"}',
    "yaml deep 5,000 flow": "a: " + "[" * 5_000 + "]" * 5_000,
    "yaml deep 1,000 block": nested_yaml_block(1_000),
    "yaml deep 150 block": nested_yaml_block(150),
    "yaml billion laughs": laughs(9),
    "yaml recursive alias": "a: &a [*a]\n",
    "yaml recursive mapping": "a: &a {b: *a}\n",
    "yaml unknown tag": "a: !!python/object:os.system [ls]\n",
    "yaml binary": CONTRACT_YAML + "extra: !!binary aGVsbG8=\n",
    "yaml date": CONTRACT_YAML.replace("entityType: invoice", "entityType: 2024-01-01"),
    "yaml set": "a: !!set {x, y}\n",
    "yaml int key": "1: a\n",
    "yaml null key": "~: a\n",
    "yaml nan": "a: .nan\n",
    "yaml huge int": "a: " + "1" * 5_000 + "\n",
    "yaml escaped NUL": 'a: "\\0"\n',
    "yaml escaped surrogate": 'a: "\\ud800"\n',
    "yaml two documents": "a: 1\n---\nb: 2\n",
    "yaml tab indentation": "a:\n\tb: 1\n",
    "yaml raw NUL": "a: b\x00c\n",
    "yaml control character": "a: b\x07c\n",
    "not utf-8": b"\xff\xfe{}",
    "latin-1": "entityType: caf\xe9\n".encode("latin-1"),
    "utf-16": CONTRACT_JSON.encode("utf-16"),
    "binary junk": bytes(range(256)) * 4,
    "huge": b" " * (10 * 1024 * 1024 + 1),
}


def _write(tmp_path: Any, suffix: str, content: str | bytes) -> str:
    path = tmp_path / f"document{suffix}"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    return str(path)


def _compile_like_the_cli(contract_path: str, org_path: str | None) -> str:
    entity = EntityContract.from_json(read_document(contract_path, "contract"))
    envelope = generate_envelope(entity)
    org = read_document(org_path, "org definition") if org_path else None
    text = json.dumps(compile_effective(envelope, org), indent=2, ensure_ascii=False)
    text.encode("utf-8")  # what the CLI prints must be printable
    return text


SUFFIXES = [".json", ".yaml", ".yml", ".txt", ""]


@pytest.mark.parametrize("suffix", [".json", ".yaml", ""])  # .yml, .txt: as .yaml, as ""
@pytest.mark.parametrize("name", sorted(SPECIMENS))
def test_each_specimen_is_read_or_refused_with_a_code(tmp_path, name, suffix):
    path = _write(tmp_path, suffix, SPECIMENS[name])
    charter_error_or_result(lambda: _compile_like_the_cli(path, None))
    charter_error_or_result(lambda: _compile_like_the_cli(_write_contract(tmp_path), path))


def _write_contract(tmp_path: Any) -> str:
    path = tmp_path / "contract.json"
    path.write_text(CONTRACT_JSON)
    return str(path)


def test_the_classic_cases_are_refused_by_name(tmp_path):
    cases = {
        "yaml deep 5,000 flow": "too deeply",
        "yaml deep 1,000 block": "too deeply",
        "json deep 5,000": "too deeply",
        "yaml billion laughs": "aliases",
        "yaml recursive alias": "alias refers to the object it is inside",
        "not utf-8": "not UTF-8",
        "huge": "larger than 10 MB",
        "empty": "empty",
        "json escaped NUL": r"U\+0000",
        "json escaped surrogate": "lone surrogate",
        "yaml binary": "bytes is not a JSON value",
        "yaml date": "date is not a JSON value",
        "yaml int key": "not a string",
    }
    for name, message in cases.items():
        suffix = ".json" if name.startswith("json") else ".yaml"
        path = _write(tmp_path, suffix, SPECIMENS[name])
        with pytest.raises(ConfigurationError, match=message):
            read_document(path, "contract")


@pytest.mark.parametrize(
    "path",
    ["/nonexistent/contract.json", "/", "/dev/null", "bad\x00path.json", "bad\ud800path.yaml"],
)
def test_unreadable_paths_are_refused_with_a_code(path):
    with pytest.raises(ConfigurationError):
        read_document(path, "contract")


def test_a_trailing_newline_does_not_make_a_name(tmp_path):
    path = _write(tmp_path, ".json", SPECIMENS["json trailing newline id"])
    with pytest.raises(CharterError, match="entityType"):
        _compile_like_the_cli(path, None)


JUNK = ["{", "}", "[", "]", ":", ",", '"', "\\", "\x00", "\ud800", "&a", "*a", "!!binary",
        "\n\t", "- ", "? ", "|", ">", "%YAML 1.1\n", "\ufeff"]  # fmt: skip
documents = st.one_of(
    hostile_json.map(lambda v: json.dumps(v, ensure_ascii=True, default=repr)),
    hostile_json.map(lambda v: json.dumps(v, ensure_ascii=False, default=repr)),
    st.text(ANY_CHARACTER, max_size=200),
    st.binary(max_size=200),
    st.builds(
        lambda text, at, junk: text[:at] + junk + text[at:],
        st.sampled_from([CONTRACT_JSON, CONTRACT_YAML, ORG_JSON]),
        st.integers(0, 2_000),
        st.sampled_from(JUNK),
    ),
    st.sampled_from(sorted(SPECIMENS)).map(SPECIMENS.__getitem__),
    st.just(Big("a: " + "b" * 100_000 + "\n")),
)


@settings_for(150)
@given(contract=documents, org=documents, suffix=st.sampled_from(SUFFIXES))
def test_any_file_is_read_or_refused_with_a_code(tmp_path, contract, org, suffix):
    contract_path = _write(tmp_path, suffix, contract)
    org_path = str(tmp_path / f"org{suffix}")
    if isinstance(org, bytes):
        (tmp_path / f"org{suffix}").write_bytes(org)
    else:
        (tmp_path / f"org{suffix}").write_text(org, encoding="utf-8", errors="surrogatepass")
    charter_error_or_result(lambda: _compile_like_the_cli(contract_path, None))
    charter_error_or_result(lambda: _compile_like_the_cli(_write_contract(tmp_path), org_path))
