"""`cudadoctor fleet`: reading many nodes' reports back.

The fleet is built by benchmarks/fleet_10k.py's generator from the facts recorded on this
project's machine (live-torch2141-cu130-nodriver.json), each variant diagnosed once through the
real pipeline: a majority of H100 nodes with driver 580.95.05, and nodes with an older driver, a
CPU torch, A100s, a missing GPU, no GPU in the container, facts-only files, plus a corrupt and a
truncated file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, load_fixture, run_cli
from cudadoctor import fleet, fleet_summary
from cudadoctor.render.fleet import render as render_fleet

sys.path.insert(0, str(REPO / "benchmarks"))
import fleet_10k as gen  # noqa: E402

N = 40


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fleet") / "reports"
    hosts = gen.generate(d, N)
    return d, hosts


@pytest.fixture(scope="module")
def result(fleet_dir):
    d, _ = fleet_dir
    return fleet_summary.run([str(d)])


@pytest.fixture(scope="module")
def templates():
    return gen.templates(load_fixture("live-torch2141-cu130-nodriver.json"))


def write(d: Path, name: str, tpl: str, host: str, when: str = "2026-11-22T01:00:00+00:00") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(tpl.replace(gen.HOST, json.dumps(host)[1:-1]).replace(gen.WHEN, when), encoding="utf-8")
    return p


def by_node(res):
    return {n["node"]: n for n in res["nodes"]}


# ------------------------------------------------------------------ the generated fleet

def test_majority_configuration(result, fleet_dir):
    _, hosts = fleet_dir
    s = result["summary"]
    assert s["nodes"] == N and s["unreadable"] == 2 and s["files"] == N + 2
    m = result["majority"]
    assert m["config"] == {"driver": "580.95.05", "torch": "2.14.1+cu130", "variant": "cu130",
                           "gpu": "NVIDIA H100 80GB HBM3", "gpus": "8", "cudadoctor": m["config"]["cudadoctor"],
                           "kb_date": m["config"]["kb_date"]}
    assert m["count"] == len(hosts["majority"]) + len(hosts["facts-only"])


def test_names_every_deviating_node_and_what_differs(result, fleet_dir):
    _, hosts = fleet_dir
    dev = {d["node"]: set(d["differs"]) for d in result["deviating_nodes"]}
    expected = {}
    for h in hosts["old-driver"]:
        expected[h] = {"driver"}
    for h in hosts["cpu-torch"]:
        expected[h] = {"torch", "variant"}
    for h in hosts["a100"]:
        expected[h] = {"gpu"}
    for h in hosts["gpu-missing"]:
        expected[h] = {"gpus"}
    for h in hosts["no-gpu-container"]:
        expected[h] = {"driver", "gpu", "gpus"}
    assert dev == expected
    old = next(d for d in result["deviating_nodes"] if d["node"] == hosts["old-driver"][0])
    assert old["differs"]["driver"] == {"value": "535.104.05", "majority": "580.95.05"}
    assert result["summary"]["deviating"] == len(expected)
    assert result["summary"]["configurations"] == 6


def test_facts_only_files_are_diagnosed_and_not_deviating(result, fleet_dir):
    _, hosts = fleet_dir
    nodes = by_node(result)
    for h in hosts["facts-only"]:
        assert nodes[h]["kind"] == "facts" and nodes[h]["rediagnosed"] is True
        assert nodes[h]["deviates"] is False
    assert all(nodes[h]["kind"] == "report" and not nodes[h]["rediagnosed"] for h in hosts["majority"])


def test_findings_by_code_with_their_nodes(result, fleet_dir):
    _, hosts = fleet_dir
    f = {x["code"]: x for x in result["findings"]}
    # What `cudadoctor check` says about each variant (the findings the reports carry).
    assert sorted(f["cpu-only-torch"]["nodes"]) == sorted(hosts["cpu-torch"])
    assert f["cpu-only-torch"]["severity"] == "error" and f["cpu-only-torch"]["count"] == len(hosts["cpu-torch"])
    assert sorted(f["no-nvidia-driver"]["nodes"]) == sorted(hosts["no-gpu-container"])
    assert f["no-nvidia-driver"]["title"]  # the registered title
    with_errors = {n["node"] for n in result["nodes"] if n["errors"]}
    # At least these two kinds of node are broken; no node of the majority configuration is.
    assert set(hosts["cpu-torch"] + hosts["no-gpu-container"]) <= with_errors
    assert not with_errors & set(hosts["majority"] + hosts["facts-only"])
    assert result["summary"]["with_errors"] == len(with_errors)


def test_corrupt_and_truncated_files_listed(result, fleet_dir):
    d, _ = fleet_dir
    bad = {Path(u["file"]).name: u["reason"] for u in result["unreadable"]}
    assert set(bad) == {"corrupt.json", "truncated.json"}
    assert bad["corrupt.json"].startswith("not UTF-8 text")
    assert bad["truncated.json"].startswith("truncated JSON")


def test_cli_text_names_deviating_nodes_and_bad_files(fleet_dir):
    d, hosts = fleet_dir
    r = run_cli("fleet", str(d))
    assert r.returncode == 1, r.stderr
    out = r.stdout
    assert "Majority configuration (" in out and "8 × NVIDIA H100 80GB HBM3" in out
    for h in hosts["old-driver"] + hosts["cpu-torch"] + hosts["a100"] + hosts["gpu-missing"] + hosts["no-gpu-container"]:
        assert h in out
    assert "NVIDIA driver 535.104.05 (majority: 580.95.05)" in out
    assert "GPU model NVIDIA A100-SXM4-80GB (majority: NVIDIA H100 80GB HBM3)" in out
    assert "corrupt.json: not UTF-8" in out and "truncated.json: truncated JSON" in out
    assert "cpu-only-torch" in out
    assert out.rstrip().splitlines()[-1].startswith("✗ ")
    assert r.stderr == ""


def test_cli_json_is_the_contract(fleet_dir):
    d, _ = fleet_dir
    r = run_cli("fleet", str(d), "--format", "json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["kind"] == "cudadoctor-fleet" and doc["schema_version"] == 1
    assert list(doc) == sorted(doc)
    assert doc["summary"]["exit_code"] == 1


def test_cli_csv_one_row_per_file(fleet_dir):
    d, hosts = fleet_dir
    r = run_cli("fleet", str(d), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == N + 2
    status = {row["node"]: row["status"] for row in rows if row["node"]}
    assert {status[h] for h in hosts["cpu-torch"]} == {"error"}
    assert {status[h] for h in hosts["old-driver"]} == {"deviates"}
    assert {status[h] for h in hosts["majority"]} == {"ok"}
    assert [row["differs"] for row in rows if row["node"] == hosts["cpu-torch"][0]] == ["torch;variant"]
    assert sorted(Path(row["file"]).name for row in rows if row["status"] == "unreadable") == ["corrupt.json", "truncated.json"]


def test_cli_markdown(fleet_dir):
    d, hosts = fleet_dir
    r = run_cli("fleet", str(d), "--format", "markdown")
    assert r.returncode == 1
    assert r.stdout.startswith("## cudadoctor fleet report")
    assert "| Nodes | NVIDIA driver |" in r.stdout
    assert "`cpu-only-torch`" in r.stdout and hosts["a100"][0] in r.stdout


def test_cli_output_file_with_placeholder(fleet_dir, tmp_path):
    d, _ = fleet_dir
    r = run_cli("fleet", str(d), "--format", "json", "-o", str(tmp_path / "fleet-{date}.json"))
    assert r.returncode == 1
    (out,) = list(tmp_path.iterdir())
    assert out.name.startswith("fleet-2") and json.loads(out.read_text())["kind"] == "cudadoctor-fleet"
    assert "wrote " + str(out) in r.stderr and "need attention" in r.stderr


# ------------------------------------------------------------------ exit codes

def test_uniform_healthy_fleet_exits_0(tmp_path, templates):
    for i in range(5):
        write(tmp_path, f"n{i}.json", templates["majority"], f"n{i}")
    r = run_cli("fleet", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "All nodes share one configuration." in r.stdout
    assert r.stdout.rstrip().endswith("✓ all 5 nodes healthy and uniform")


def test_one_deviating_healthy_node_exits_1(tmp_path, templates):
    for i in range(4):
        write(tmp_path, f"n{i}.json", templates["majority"], f"n{i}")
    write(tmp_path, "odd.json", templates["a100"], "odd")
    r = run_cli("fleet", str(tmp_path), "--format", "json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert [d["node"] for d in doc["deviating_nodes"]] == ["odd"] and doc["summary"]["with_errors"] == 0


def test_an_unreadable_file_exits_1(tmp_path, templates):
    for i in range(3):
        write(tmp_path, f"n{i}.json", templates["majority"], f"n{i}")
    (tmp_path / "zz.json").write_text("")
    r = run_cli("fleet", str(tmp_path))
    assert r.returncode == 1
    assert "zz.json: empty file" in r.stdout and "1 file could not be read" in r.stdout


def test_strict_counts_warnings(tmp_path, templates):
    doc = json.loads(templates["majority"])
    doc["findings"].append({"code": "some-warning", "severity": "warning", "title": "a warning"})
    write(tmp_path, "w.json", json.dumps(doc), "w")
    write(tmp_path, "n.json", templates["majority"], "n")
    assert run_cli("fleet", str(tmp_path)).returncode == 0
    r = run_cli("fleet", str(tmp_path), "--strict", "--format", "json")
    assert r.returncode == 1 and json.loads(r.stdout)["summary"]["with_warnings"] == 1


@pytest.mark.parametrize("make,needle", [
    (lambda d: None, "no report files (*.json)"),
    (lambda d: (d / "a.json").write_text("{not json"), "none of the 1 file is a readable cudadoctor report (first:"),
])
def test_nothing_readable_exits_2(tmp_path, make, needle):
    make(tmp_path)
    r = run_cli("fleet", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.startswith("cudadoctor: error: ") and r.stderr.count("\n") == 1 and needle in r.stderr, r.stderr


def test_missing_path_exits_2(tmp_path):
    r = run_cli("fleet", str(tmp_path / "nope"))
    assert r.returncode == 2 and "no such file or directory" in r.stderr


def test_no_argument_is_usage_error():
    assert run_cli("fleet").returncode == 2


# ------------------------------------------------------------------ untrusted input

def test_bad_files_are_listed_not_fatal(tmp_path, templates):
    good = write(tmp_path, "good.json", templates["majority"], "good")
    newer = json.loads(templates["majority"])
    newer["schema_version"] = 99
    cases = {
        "newer.json": json.dumps(newer),
        "other.json": json.dumps({"kind": "something-else", "schema_version": 1}),
        "list.json": "[1, 2, 3]",
        "deep.json": "[" * 100000 + "]" * 100000,
        "nofindings.json": templates["majority"].replace('"findings": [', '"findings_": ['),
        "badfinding.json": json.dumps({**json.loads(templates["majority"]), "findings": [{"code": 1}]}),
        "badsection.json": json.dumps({**json.loads(templates["facts-only"]), "nvml": [1]}),
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    res = fleet_summary.run([str(tmp_path)])
    assert [n["file"] for n in res["nodes"]] == [str(good)]
    bad = {Path(u["file"]).name: u["reason"] for u in res["unreadable"]}
    assert "newer cudadoctor (schema 99" in bad["newer.json"]
    assert "kind='something-else'" in bad["other.json"]
    assert bad["list.json"] == "expected a JSON object (a cudadoctor report or facts file), got list"
    assert "nested too deeply" in bad["deep.json"] or "not valid JSON" in bad["deep.json"]
    assert bad["nofindings.json"] == "report has no 'findings' list"
    assert bad["badfinding.json"].startswith("finding #1 is malformed")
    assert "section 'nvml' should be an object, got a list" in bad["badsection.json"]


def test_size_limit(tmp_path):
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"kind": "cudadoctor-report", "pad": "x" * 5000}))
    with pytest.raises(fleet.UnreadableFile, match="larger than"):
        fleet.read_bytes(str(p), limit=1000)
    assert fleet.MAX_FILE_BYTES == 8 * 1024 * 1024


def test_pickle_is_never_unpickled(tmp_path, templates):
    marker = tmp_path / "unpickled"

    class Evil:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    (tmp_path / "evil.json").write_bytes(pickle.dumps(Evil()))
    write(tmp_path, "good.json", templates["majority"], "good")
    res = fleet_summary.run([str(tmp_path)])
    assert not marker.exists()
    assert [Path(u["file"]).name for u in res["unreadable"]] == ["evil.json"]


def test_fifo_is_not_read(tmp_path, templates):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    write(tmp_path, "good.json", templates["majority"], "good")
    res = fleet_summary.run([str(tmp_path)])  # would block forever if the FIFO were opened
    assert {u["reason"] for u in res["unreadable"]} == {"not a regular file"}


def test_hidden_and_temporary_files_skipped(tmp_path, templates):
    write(tmp_path, "good.json", templates["majority"], "good")
    (tmp_path / ".good.json.123.abcd.tmp").write_text("{")
    (tmp_path / ".hidden.json").write_text("{")
    (tmp_path / "notes.txt").write_text("x")
    res = fleet_summary.run([str(tmp_path)])
    assert res["summary"]["files"] == 1 and not res["unreadable"]


def test_subdirectories_walked(tmp_path, templates):
    write(tmp_path / "job1", "a.json", templates["majority"], "a")
    write(tmp_path / "job2", "b.json", templates["majority"], "b")
    assert sorted(n["node"] for n in fleet_summary.run([str(tmp_path)])["nodes"]) == ["a", "b"]


def test_untrusted_names_cannot_inject(tmp_path, templates):
    write(tmp_path, "a.json", templates["a100"], "=HYPERLINK(\"http://x\")\x1b[31m")
    write(tmp_path, "b.json", templates["old-driver"], "[click](javascript:alert(1))")
    write(tmp_path, "c1.json", templates["majority"], "c1")
    write(tmp_path, "c2.json", templates["majority"], "c2")
    res = fleet_summary.run([str(tmp_path)])
    text = render_fleet(res, "text")
    assert "\x1b" not in text
    rows = list(csv.reader(io.StringIO(render_fleet(res, "csv"))))
    assert all(not cell.startswith("=") for row in rows for cell in row)
    md = render_fleet(res, "markdown")
    assert "[click](javascript" not in md and "\\[click\\]" in md


# ------------------------------------------------------------------ names, pseudonyms, duplicates

def test_pseudonymous_names_group_like_real_ones(tmp_path, templates):
    names = ["host-3f9a2c71", "host-0b7d55e2", "host-c41e9a08"]
    for n in names:
        write(tmp_path, f"{n}.json", templates["majority"], n)
    write(tmp_path, "x.json", templates["old-driver"], "host-9d2f0011")
    res = fleet_summary.run([str(tmp_path)])
    assert res["majority"]["count"] == 3
    assert [d["node"] for d in res["deviating_nodes"]] == ["host-9d2f0011"]


def test_no_hostname_uses_file_name(tmp_path, templates):
    doc = json.loads(templates["majority"].replace(gen.WHEN, "2026-11-22T00:00:00+00:00"))
    del doc["facts"]["system"]["hostname"]
    (tmp_path / "rack4-slot2.json").write_text(json.dumps(doc))
    assert [n["node"] for n in fleet_summary.run([str(tmp_path)])["nodes"]] == ["rack4-slot2"]


def test_same_name_in_two_files(tmp_path, templates):
    write(tmp_path, "n1-20261121.json", templates["old-driver"], "n1", when="2026-11-21T10:00:00+00:00")
    write(tmp_path, "n1-20261122.json", templates["majority"], "n1", when="2026-11-22T10:00:00+00:00")
    write(tmp_path, "n2-20261122.json", templates["majority"], "n2", when="2026-11-22T10:00:00+00:00")
    both = fleet_summary.run([str(tmp_path)])
    assert both["summary"]["nodes"] == 3
    assert {n["node"] for n in both["nodes"]} == {f"n1 ({tmp_path / 'n1-20261121.json'})",
                                                  f"n1 ({tmp_path / 'n1-20261122.json'})", "n2"}
    assert "appears in more than one file" in render_fleet(both, "text")
    latest = fleet_summary.run([str(tmp_path)], latest=True)
    assert latest["summary"]["nodes"] == 2 and latest["summary"]["uniform"] is True
    assert latest["superseded"] == [{"node": "n1", "file": str(tmp_path / "n1-20261121.json"),
                                     "by": str(tmp_path / "n1-20261122.json")}]
    assert latest["summary"]["exit_code"] == 0


def test_natural_order(tmp_path, templates):
    for n in ("node10", "node2", "node1"):
        write(tmp_path, f"{n}.json", templates["majority"], n)
    assert [n["node"] for n in fleet_summary.run([str(tmp_path)])["nodes"]] == ["node1", "node2", "node10"]


def test_recheck_rediagnoses_reports(tmp_path, templates):
    doc = json.loads(templates["cpu-torch"].replace(gen.HOST, "c").replace(gen.WHEN, "2026-11-22T00:00:00+00:00"))
    doc["findings"] = []  # as if written by a cudadoctor that did not know this problem
    (tmp_path / "c.json").write_text(json.dumps(doc))
    assert by_node(fleet_summary.run([str(tmp_path)]))["c"]["codes"] == []
    rechecked = by_node(fleet_summary.run([str(tmp_path)], recheck=True))["c"]
    assert "cpu-only-torch" in rechecked["codes"] and rechecked["rediagnosed"]


def test_files_given_explicitly(fleet_dir):
    d, hosts = fleet_dir
    files = [str(d / f"{h}.json") for h in hosts["majority"][:3] + hosts["a100"][:1]]
    res = fleet_summary.run(files + files[:1])  # the same file twice counts once
    assert res["summary"]["nodes"] == 4 and [x["node"] for x in res["deviating_nodes"]] == hosts["a100"][:1]


# ------------------------------------------------------------------ configuration of one node

def test_config_of_recorded_nodes():
    from cudadoctor.facts import Facts

    cu = fleet.node_config(Facts(load_fixture("live-torch2141-cu130-nodriver.json")), {})
    assert cu["driver"] == "not visible (nvml: library-missing)"
    assert (cu["torch"], cu["variant"]) == ("2.14.1+cu130", "cu130")
    assert (cu["gpu"], cu["gpus"]) == ("none visible", "0")
    cpu = fleet.node_config(Facts(load_fixture("live-torch2130-cpu-tv0280.json")), {})
    assert (cpu["torch"], cpu["variant"]) == ("2.13.0+cpu", "cpu")


def test_config_quick_mode_does_not_guess_variant():
    from cudadoctor.facts import Facts

    facts = load_fixture("live-torch2141-cu130-nodriver.json")
    facts["torch"] = {"status": "skipped"}
    for d in facts["packages"]["distributions"]:
        if d["name"] == "torch":
            d["version"] = "2.14.1"  # PyPI wheel: no local tag
    c = fleet.node_config(Facts(facts), {})
    assert (c["torch"], c["variant"]) == ("2.14.1", "unknown")


def test_mixed_gpus():
    from cudadoctor.facts import Facts

    f = gen.with_driver(load_fixture("live-torch2141-cu130-nodriver.json"), n=2)
    f["nvml"]["devices"][1]["name"] = "NVIDIA L4"
    c = fleet.node_config(Facts(f), {})
    assert c["gpu"] == "1× NVIDIA H100 80GB HBM3 + 1× NVIDIA L4" and c["gpus"] == "2"


# ------------------------------------------------------------------ the benchmark itself runs

def test_benchmark_script_runs(tmp_path):
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "fleet_10k.py"), "--nodes", "300"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "nodes 300, configurations 7" in r.stdout or "nodes 300, configurations 6" in r.stdout
    assert "reports/s" in r.stdout and "unreadable 2" in r.stdout


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(obj, list) and obj:
        yield from _leaves(obj[0], path + (0,))
    yield path


def test_any_value_of_the_wrong_type_is_handled(tmp_path, templates):
    """Every field of a real report replaced by each JSON type: a node or a listed file, never a crash."""
    base = json.loads(templates["majority"].replace(gen.HOST, "n").replace(gen.WHEN, "2026-11-22T00:00:00+00:00"))
    paths = [p for p in _leaves(base) if p]
    seen = {"node": 0, "unreadable": 0}
    for i, path in enumerate(paths):
        for j, value in enumerate((None, 7, "x", [], {}, [{"code": None}], -1.5, True)):
            doc = json.loads(json.dumps(base))
            cur = doc
            for k in path[:-1]:
                cur = cur[k]
            cur[path[-1]] = value
            f = tmp_path / f"{i}-{j}.json"
            f.write_text(json.dumps(doc))
            try:
                node = fleet.read_node(str(f), diagnose=lambda facts: [])
                assert set(node.config) == set(fleet.KEY_NAMES) and all(isinstance(v, str) for v in node.config.values())
                seen["node"] += 1
            except fleet.UnreadableFile:
                seen["unreadable"] += 1
            f.unlink()
    assert seen["node"] > 1000 and seen["unreadable"] > 10, seen


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "csv"])
def test_surrogate_escapes_and_non_utf8_file_names(tmp_path, templates, fmt):
    """A host name with a "\\udcff" escape and a file name that is not UTF-8 reach every format."""
    d = tmp_path / "r"
    write(d, "a.json", templates["majority"], "a")
    (d / "b.json").write_text(templates["old-driver"].replace(f'"{gen.HOST}"', '"bad\\udcffname"').replace(gen.WHEN, "2026"))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(os.fsencode(d), b"\xff\xfe.json"), "wb") as f:
        f.write(b"{broken")
    r = run_cli("fleet", str(d), "--format", fmt, "-o", str(tmp_path / f"out.{fmt}"))
    assert r.returncode == 1, r.stderr
    text = (tmp_path / f"out.{fmt}").read_text(encoding="utf-8")
    assert "name" in text and ".json" in text
    r = run_cli("fleet", str(d), "--format", fmt)
    assert r.returncode == 1, r.stderr


def test_earlier_fleet_summaries_in_the_directory_are_skipped(tmp_path, templates):
    write(tmp_path, "a.json", templates["majority"], "a")
    r = run_cli("fleet", str(tmp_path), "--format", "json", "-o", str(tmp_path / "fleet" / "fleet-{datetime}.json"))
    assert r.returncode == 0, r.stderr
    r = run_cli("fleet", str(tmp_path), "--format", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["summary"]["nodes"] == 1 and doc["unreadable"] == []


# ------------------------------------------------------------------ smoke results next to the reports

SMOKE = Path(__file__).parent / "fixtures" / "smoke"


def test_smoke_results_are_summarised_with_the_root_cause_first(tmp_path, templates):
    write(tmp_path, "a.json", templates["majority"], "a")
    write(tmp_path, "b.json", templates["majority"], "b")
    for f in SMOKE.glob("*.json"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    res = fleet_summary.run([str(tmp_path)])
    sm = res["smoke"]
    assert (sm["runs"], sm["passed"], sm["failed"], sm["errors"]) == (5, 3, 2, 0)
    assert res["summary"]["nodes"] == 2 and res["unreadable"] == []
    cause, effect = sm["failed_stages"]
    assert cause["stage"] == "ddp" and cause["ranks"] == ["vm#1"] and cause["message"] == "RuntimeError: injected fault"
    assert effect["ranks"] == ["vm#0"] and effect["message"].startswith("stopped by the launcher (SIGTERM) in stage 'ddp'")
    assert sm["hosts"]["vm"]["failed"] == [0, 1]
    assert sm["bandwidth"]["busbw_gbps"]["min"] > 0 and len(sm["bandwidth"]["slowest"]) == 4
    assert res["summary"]["exit_code"] == 1
    text = render_fleet(res, "text")
    assert "Smoke (5 runs on 2 hosts, world size 2): 3 passed, 2 failed" in text
    assert text.index("vm#1 — RuntimeError: injected fault") < text.index("vm#0 — stopped by the launcher")
    assert text.rstrip().endswith("smoke: 2 of 5 runs failed")
    rows = list(csv.DictReader(io.StringIO(render_fleet(res, "csv"))))
    assert sorted(r["status"] for r in rows if r["status"].startswith("smoke")) == \
        ["smoke-fail", "smoke-fail", "smoke-pass", "smoke-pass", "smoke-pass"]
    assert "### Smoke" in render_fleet(res, "markdown")


def test_passing_smoke_results_alone(tmp_path):
    for f in SMOKE.glob("*pass*.json"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    r = run_cli("fleet", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("✓ smoke: all 3 runs passed")
    assert "Majority configuration" not in r.stdout


def test_malformed_smoke_result_is_listed(tmp_path, templates):
    write(tmp_path, "a.json", templates["majority"], "a")
    doc = json.loads((SMOKE / "dist-gloo-pass-rank0.json").read_text())
    doc["status"] = "maybe"
    (tmp_path / "s.json").write_text(json.dumps(doc))
    doc["status"], doc["stages"] = "pass", [{"name": 1}]
    (tmp_path / "t.json").write_text(json.dumps(doc))
    del doc["stages"]  # was "could not be interpreted (TypeError)"
    (tmp_path / "u.json").write_text(json.dumps(doc))
    bad = {Path(u["file"]).name: u["reason"] for u in fleet_summary.run([str(tmp_path)])["unreadable"]}
    assert bad == {
        "s.json": "smoke result with status 'maybe'",
        "t.json": "smoke result with a malformed stage",
        "u.json": "smoke result without a list of stages",
    }


def test_a_census_of_redacted_reports_names_each_node_by_its_file(tmp_path):
    """Reports written as the recipes write them (`check -o DIR/{host}.json`, redacted by default: the host name
    inside is a per-report pseudonym) are named by their files, so the failing node can be found (issue 23 item 3)."""
    from conftest import run_cli as _run

    facts = Path(__file__).parent / "fixtures" / "facts"
    for node, src in (("node017", "hgx-8x-h100-healthy.json"), ("node018", "hgx-8x-h100-ecc.json")):
        fx = json.loads((facts / src).read_text())
        fx.setdefault("system", {})["hostname"] = f"{node}.cluster.example"  # as the node's own probe records it
        (tmp_path / "in").mkdir(exist_ok=True)
        (tmp_path / "in" / src).write_text(json.dumps(fx))
        r = _run("check", "--facts", str(tmp_path / "in" / src), "--format", "json", "-o", str(tmp_path / "reports" / f"{node}.json"))
        assert r.returncode in (0, 1), r.stderr
        doc = json.loads((tmp_path / "reports" / f"{node}.json").read_text())
        assert doc["facts"]["redaction"]["pseudonyms"] == "per-report" and doc["facts"]["system"]["hostname"] != node
    r = _run("fleet", str(tmp_path / "reports"), "--format", "json")
    out = json.loads(r.stdout)
    text = json.dumps(out)
    assert "node018" in text and "node017" in text
    r = _run("fleet", str(tmp_path / "reports"))
    bad = [ln for ln in r.stdout.splitlines() if "node018" in ln]
    assert bad and r.returncode == 1, r.stdout
