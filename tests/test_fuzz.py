"""Property tests: random and mutated real inputs never raise an unexpected exception.

Fixed seed (derandomize) and a bounded number of examples, so CI is repeatable and quick.
"""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import load_fixture
from cudadoctor import registry
from cudadoctor.facts import FactsError, parse_document
from cudadoctor.render import render
from cudadoctor.report import diagnose

SETTINGS = settings(derandomize=True, max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
REAL = [load_fixture("live-torch2141-cu130-nodriver.json"), load_fixture("live-torch2130-cpu-tv0280.json")]
REG = registry.load(plugins=False)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


def paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, prefix + (i,))


@st.composite
def mutated_facts(draw):
    doc = copy.deepcopy(draw(st.sampled_from(REAL)))
    all_paths = [p for p in paths(doc) if p and p[0] not in ("schema_version", "kind")]
    for _ in range(draw(st.integers(1, 6))):
        p = draw(st.sampled_from(all_paths))
        parent = doc
        try:
            for k in p[:-1]:
                parent = parent[k]
            parent[p[-1]] = draw(json_values)
        except (KeyError, IndexError, TypeError):
            continue
    return doc


def run_everything(facts):
    report = diagnose(facts, REG)
    crashed = [f for f in report.findings if f.code == "check-crashed"]
    assert not crashed, crashed[0].evidence
    for fmt in ("text", "json", "markdown"):
        assert render(report, fmt)
    json.loads(render(report, "json"))


@SETTINGS
@given(mutated_facts())
def test_mutated_real_facts_never_crash_checks_or_renderers(facts):
    try:
        parsed = parse_document(json.dumps(facts), "fuzz")
    except FactsError as e:  # a wrong-typed section is refused cleanly, in one line
        assert "\n" not in str(e)
        return
    run_everything(parsed)


@SETTINGS
@given(st.binary(max_size=2000) | st.text(max_size=2000).map(str.encode))
def test_random_bytes_are_a_clean_error_or_facts(data):
    try:
        facts = parse_document(data, "fuzz")
    except FactsError as e:
        assert "\n" not in str(e)
        return
    run_everything(facts)


@SETTINGS
@given(st.dictionaries(st.sampled_from(["system", "nvml", "torch", "packages", "environment", "toolkit", "python", "probe_errors", "user_error"]),
                       json_values, max_size=9))
def test_random_sections(sections):
    doc = {"kind": "cudadoctor-facts", "schema_version": 1, **sections}
    try:
        facts = parse_document(json.dumps(doc), "fuzz")
    except FactsError:
        return
    run_everything(facts)


def test_truncations_of_a_real_report_are_clean_errors():
    text = json.dumps(diagnose(copy.deepcopy(REAL[0]), REG).to_dict())
    for cut in range(0, len(text), max(1, len(text) // 300)):
        try:
            parse_document(text[:cut], "cut")
        except FactsError as e:
            assert "\n" not in str(e)


def test_deep_nesting_is_a_clean_error():
    for payload in ("[" * 100000, '{"a":' * 100000):
        try:
            parse_document(payload, "deep")
        except FactsError:
            pass
