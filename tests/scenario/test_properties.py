"""Property tests: random scenario documents never make the CLI show a traceback.

Documents start from a valid scenario and get keys deleted, values replaced by
values of random types (huge, tiny, inf, nan, strings, arrays, tables) and
unknown keys added; also raw random text and bytes. ``trackrider validate``
must exit 0 (printing ``ok``) or 2 (one ``error:`` line), never anything else.
"""
from __future__ import annotations

import json
import math
import tomllib

from tests.scenario.scenario_texts import BASE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from trackrider.cli import app

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


def toml_value(v) -> str:
    """Inline TOML for a JSON-like value (what a TOML writer would produce)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=True)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def toml_document(doc: dict) -> str:
    return "\n".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in doc.items()) + "\n"


scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1e308, -1e308, 5e-324, 1e-12, 1e12, 2**62]),
    st.text(max_size=12),
    st.sampled_from(["main", "red", "red:1", "red:0", "world", "bob", "lift", "pulley", "coaster", "up"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=8)


def paths(node, prefix=()):
    """Every (path) to a value inside a document of dicts and lists."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield prefix + (k,)
            yield from paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield prefix + (i,)
            yield from paths(v, prefix + (i,))


def get_parent(doc, path):
    node = doc
    for p in path[:-1]:
        node = node[p]
    return node


@st.composite
def mutated_documents(draw):
    doc = tomllib.loads(BASE)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        all_paths = list(paths(doc))
        if not all_paths:
            break
        path = draw(st.sampled_from(all_paths))
        parent = get_parent(doc, path)
        action = draw(st.sampled_from(["delete", "replace", "replace", "add"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = draw(values)
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=10))] = draw(values)
    return doc


def check_cli(path):
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr, result.exception)
    if result.exit_code == 0:
        assert result.stdout == "ok\n"
    else:
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr


@SETTINGS
@given(doc=mutated_documents())
def test_random_documents_never_traceback(doc, tmp_path_factory):
    path = tmp_path_factory.mktemp("prop") / "s.toml"
    path.write_text(toml_document(doc), encoding="utf-8")
    check_cli(path)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(lambda t: t.encode("utf-8", "replace"))))
def test_random_bytes_never_traceback(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("prop") / "s.toml"
    path.write_bytes(data)
    check_cli(path)
