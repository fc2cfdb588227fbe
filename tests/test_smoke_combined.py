"""`cudadoctor smoke --distributed`: real torchrun jobs over Gloo on this machine, with faults injected into one
rank (hang, exit, kill, never checking in, a wrong value), plus the pure parts (route lookup, blame, bandwidth
formula, rendering).

The torchrun tests need an interpreter with torch: $CUDADOCTOR_TEST_TORCH_PYTHON, else this one if it imports
torch (CI's .venv), else /work/venvs/t214/bin/python; they run the `torchrun` beside it (or
`python -m torch.distributed.run`) with PYTHONPATH pointing at this checkout. Sizes are kept small with
CUDADOCTOR_DIST_SWEEP and --rank-timeout 5 so that each job takes seconds, not minutes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cudadoctor.smoke import combined as D

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHILD_PATH = REPO / "cudadoctor" / "smoke" / "combined_workload.py"
T = 5.0  # --rank-timeout in the fault tests


def _find_torch_python():
    # the job runs `python -m cudadoctor`, so prefer an interpreter that has torch AND cudadoctor's
    # dependencies (CI's .venv); otherwise $CUDADOCTOR_TEST_TORCH_PYTHON or t214, with a shim below
    if importlib.util.find_spec("torch") is not None:
        return sys.executable
    env = os.environ.get("CUDADOCTOR_TEST_TORCH_PYTHON")
    if env:
        return env
    if os.access("/work/venvs/t214/bin/python", os.X_OK):
        return "/work/venvs/t214/bin/python"
    return None


TORCH_PY = _find_torch_python()
needs_torch = pytest.mark.skipif(TORCH_PY is None, reason="no interpreter with torch: set CUDADOCTOR_TEST_TORCH_PYTHON")


@pytest.fixture(scope="session")
def job_pythonpath(tmp_path_factory):
    """PYTHONPATH for the job: this checkout, plus links to the pure-Python dependencies (click, packaging,
    pynvml) of the test interpreter when the torch interpreter lacks them (e.g. a bare torch venv)."""
    paths = [str(REPO)]
    probe = subprocess.run([TORCH_PY, "-c", "import click, packaging"], capture_output=True, timeout=60)
    if probe.returncode != 0:
        shim = tmp_path_factory.mktemp("deps")
        for name in ("click", "packaging", "pynvml"):
            spec = importlib.util.find_spec(name)
            if spec and spec.origin:
                src = Path(spec.origin)
                src = src.parent if src.name == "__init__.py" else src
                (shim / src.name).symlink_to(src)
        paths.append(str(shim))
    return os.pathsep.join(paths)


@pytest.fixture
def torchrun(tmp_path, job_pythonpath):
    return lambda *args, **kw: _torchrun(tmp_path, job_pythonpath, *args, **kw)


def _torchrun(tmp_path, pythonpath, *args, fault=None, nproc=2, sweep="16384:2", timeout=150):
    """Run a real torchrun job of `python -m cudadoctor smoke --distributed ...`; JSON report -> tmp_path/report.json."""
    script = Path(TORCH_PY).parent / "torchrun"
    launcher = [str(script)] if script.exists() else [TORCH_PY, "-m", "torch.distributed.run"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDADOCTOR_DIST_", "MASTER_", "RANK", "WORLD_"))}
    env.update(PYTHONPATH=pythonpath, NO_COLOR="1", CUDADOCTOR_DIST_SWEEP=sweep)
    if fault:
        env["CUDADOCTOR_DIST_FAULT"] = fault
    out = tmp_path / "report.json"
    cmd = launcher + ["--standalone", "--nproc-per-node", str(nproc), "-m", "cudadoctor", "smoke", "--distributed",
                      "--format", "json", "-o", str(out), *args]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=tmp_path)
    wall = time.monotonic() - t0
    rep = json.loads(out.read_text()) if out.exists() else None
    return p, rep, wall


def culprit_ranks(rep):
    return [c["rank"] for c in rep["culprits"]]


# ---------------------------------------------------------------------------------------------------------
# Real jobs over Gloo on this machine
# ---------------------------------------------------------------------------------------------------------

@needs_torch
def test_two_ranks_over_gloo_pass_with_exact_collectives_and_bandwidth(torchrun, tmp_path):
    p, rep, wall = torchrun("--device", "cpu", "--rank-timeout", "30", sweep="65536:3")
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    assert rep["status"] == "pass" and rep["backend"] == "gloo" and rep["world_size"] == 2
    assert [r["rank"] for r in rep["ranks"]] == [0, 1]
    for r in rep["ranks"]:
        assert r["status"] == "pass"
        assert [s["name"] for s in r["stages"]] == list(D.STAGES)
        assert all(s["verdict"] == "pass" for s in r["stages"])
        ar = next(s for s in r["stages"] if s["name"] == "allreduce")["evidence"]
        assert [c["exact"] for c in ar["checks"]] == [True, True] and ar["expected"] == "3*(1 + i%7)"
        assert ar["checks"][1]["elements"] == (4 << 20) // 4 + 3
        bc = next(s for s in r["stages"] if s["name"] == "broadcast")["evidence"]
        assert bc["wrong_elements"] == 0
    # bandwidth: 1 KiB .. 64 KiB, nccl-tests' formulas, the same (slowest-rank) time on both ranks
    bw = rep["bandwidth"]
    assert [row["bytes"] for row in bw["rows"]] == [1024 << i for i in range(7)]
    for row in bw["rows"]:
        assert row["iters"] == 3 and row["time_us"] > 0
        assert row["algbw_gbps"] == pytest.approx(row["bytes"] / (row["time_us"] * 1e-6) / 1e9, rel=1e-3)
        assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * 2 * (2 - 1) / 2, rel=1e-5)
    other = next(s for s in rep["ranks"][1]["stages"] if s["name"] == "bandwidth")["evidence"]
    assert [x["time_us"] for x in other["rows"]] == [x["time_us"] for x in bw["rows"]]
    assert "not a GPU interconnect" in bw["note"]
    # launch facts in the report
    assert rep["launcher"]["kind"] == "torchrun" and rep["launcher"]["agent_store"] is True
    assert rep["env"]["WORLD_SIZE"] == "2" and rep["env"]["MASTER_ADDR"] == rep["master"]["addr"]
    assert rep["network"]["interface"] == "lo" and rep["network"]["source"].startswith("route to MASTER_ADDR")
    assert rep["culprits"] == [] and rep["error"] is None
    # redacted like every output: no rank's host name, in the file or on the terminal
    host = socket.gethostname()
    for text in ((tmp_path / "report.json").read_text(), p.stdout, p.stderr):
        assert not re.search(rf"(?<![A-Za-z0-9_-]){re.escape(host)}(?![A-Za-z0-9_-])", text, re.I), text[:2000]
    assert {r["hostname"] for r in rep["ranks"]} == {rep["ranks"][0]["hostname"]}
    assert rep["ranks"][0]["hostname"].startswith("host-")
    # the text and markdown renderings of that real report
    text = D.render(rep, "text")
    assert text.splitlines()[0] == "cudadoctor smoke --distributed (gloo, 2 ranks, device cpu): PASS"
    assert "64 KiB" in text and "busbw GB/s" in text and "interface lo" in text
    assert "all-reduce, exact on every rank" in text and "broadcast from rank 0, exact on every rank" in text
    md = D.render(rep, "markdown")
    assert "| 0 | " in md and "| size | time (µs) | algbw (GB/s) | busbw (GB/s) | iters |" in md
    assert wall < 90


@needs_torch
def test_hung_rank_is_named_within_the_bound_and_the_job_ends(torchrun):
    p, rep, wall = torchrun("--device", "cpu", "--rank-timeout", str(T), fault="rank1:hang")
    assert p.returncode != 0
    assert rep["status"] == "fail" and culprit_ranks(rep) == [1]
    c = rep["culprits"][0]
    assert c["kind"] == "stalled" and "rank 1 stalled" in c["reason"] and "finished 'init'" in c["reason"]
    # rank 0 waited in the all-reduce and timed out on the process group's bound, not forever
    r0 = rep["ranks"][0]
    assert "Timed out" in next(s for s in r0["stages"] if s["name"] == "allreduce")["message"]
    # the bound: from rank 1's last progress (when it stalled) to the report, at most the rank timeout
    # plus the watchdog grace and the kill grace; the whole job well under a minute
    stalled_at = rep["ranks"][1]["progress"]["t"]
    assert rep["generated_unix"] - stalled_at < T + 10 + 5
    assert wall < 60
    # rank 1's own stack at the moment it was stopped is in the report
    assert "inject" in rep["ranks"][1]["stderr_tail"]
    assert "rank 1 stalled" in D.render(rep, "text")


@needs_torch
def test_rank_whose_workload_exits_is_named_and_the_others_stop(torchrun):
    p, rep, wall = torchrun("--device", "cpu", "--rank-timeout", str(T), fault="rank1:exit")
    assert p.returncode != 0
    assert culprit_ranks(rep) == [1]
    assert rep["culprits"][0]["kind"] == "crash"
    assert "child exited with code 17 in stage 'allreduce'" in rep["culprits"][0]["reason"]
    assert rep["ranks"][0]["error"]["kind"] in ("aborted", "collective")
    assert wall < 60


@needs_torch
def test_killed_rank_worker_is_named_by_rank_0_when_torchrun_tears_the_job_down(torchrun):
    p, rep, wall = torchrun("--device", "cpu", "--rank-timeout", str(T), fault="rank1:kill")
    assert p.returncode != 0
    assert "exitcode: -9" in p.stderr  # torchrun saw rank 1's worker die
    assert culprit_ranks(rep) == [1] and rep["culprits"][0]["kind"] == "no-result"
    # torchrun's SIGTERM normally reaches rank 0 while it waits for rank 1's result (it checks its workers
    # every 0.1 s); on a very busy machine it may come after the --rank-timeout wait: named either way
    if rep["terminated_by_launcher"]:
        assert "the launcher ended the job before it reported" in rep["culprits"][0]["reason"]
    else:
        assert "no result within 5 s" in rep["culprits"][0]["reason"]
    assert rep["ranks"][1]["status"] == "missing"
    assert wall < 60


@needs_torch
def test_rank_that_never_checks_in_is_named_after_the_rank_timeout(torchrun):
    p, rep, wall = torchrun("--device", "cpu", "--rank-timeout", str(T), fault="rank1:absent")
    assert p.returncode != 0
    assert culprit_ranks(rep) == [1] and rep["culprits"][0]["kind"] == "never-arrived"
    assert "never checked in within 5 s" in rep["culprits"][0]["reason"]
    assert T <= rep["elapsed_s"] < T + 5  # rank 0 waited the bound, not longer
    assert wall < 60


@needs_torch
def test_a_wrong_contribution_fails_the_exact_all_reduce_on_every_rank(torchrun):
    p, rep, _ = torchrun("--device", "cpu", "--rank-timeout", "30", fault="rank1:wrong")
    assert p.returncode != 0
    assert culprit_ranks(rep) == [0, 1]  # a sum cannot say whose term was wrong: every rank saw it
    for r in rep["ranks"]:
        st = next(s for s in r["stages"] if s["name"] == "allreduce")
        assert st["verdict"] == "fail" and "is WRONG" in st["message"] and "element 0 is 4, expected 3" in st["message"]


@needs_torch
def test_cuda_on_this_gpu_less_machine_fails_the_device_stage_of_every_rank(torchrun):
    p, rep, wall = torchrun("--rank-timeout", str(T))
    assert p.returncode != 0
    assert rep["backend"] == "nccl" and rep["device"] == "cuda"
    assert [r["device"] for r in rep["ranks"]] == ["cuda:0", "cuda:1"]
    dev0 = next(s for s in rep["ranks"][0]["stages"] if s["name"] == "device")
    assert dev0["verdict"] == "fail"
    assert ("CUDA failed to initialise" in dev0["message"]) or ("CPU-only build" in dev0["message"])
    # whichever rank failed first stops the other; every rank named is named for its device
    assert rep["culprits"] and all(c["kind"] == "device" for c in rep["culprits"])
    assert "stage 'device'" in rep["culprits"][0]["reason"]
    assert wall < 60


# ---------------------------------------------------------------------------------------------------------
# CLI errors: not launched as a job, wrong device
# ---------------------------------------------------------------------------------------------------------

def _cli(*args, env=None):
    e = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "cudadoctor", "smoke", "--distributed", *args],
                          capture_output=True,
                          text=True, env=e, timeout=60)


def test_without_a_launcher_is_one_line_and_exit_2():
    p = _cli("--device", "cpu")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "cudadoctor: error: --distributed needs a launcher: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT not set. "
        "Start it with: torchrun --standalone --nproc-per-node N -m cudadoctor smoke --distributed"]


@pytest.mark.parametrize("args,needle", [
    (["--device", "all"], "--distributed takes --device cuda"),
    (["--device", "cpu", "--synthetic"], "not used by --distributed (without --per-rank)"),
])
def test_bad_options_are_one_line_and_exit_2(args, needle):
    p = _cli(*args)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("env,needle", [
    ({"RANK": "2", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}, "RANK=2 is not in 0..WORLD_SIZE-1"),
    ({"RANK": "x", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}, "must be integers"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "70000"}, "is not a TCP port"),
])
def test_launch_info_rejects_bad_environments(env, needle):
    with pytest.raises(D.LaunchError, match=needle.replace(".", r"\.")):
        D.launch_info(env)


# ---------------------------------------------------------------------------------------------------------
# Pure parts
# ---------------------------------------------------------------------------------------------------------

def test_route_lookup_on_this_machines_recorded_route_table():
    # /proc/net/route of this machine (eth0 192.0.2.2/24, default via 192.0.2.1), recorded as is
    table = (FIXTURES / "net" / "proc_net_route.txt").read_text()
    rows = D.parse_route_table(table)
    assert [(r["iface"], str(r["destination"]), r["prefix"]) for r in rows] == [("eth0", "0.0.0.0", 0),
                                                                                 ("eth0", "192.0.2.0", 24)]
    assert str(rows[0]["gateway"]) == "192.0.2.1"
    assert D.route_interface("192.0.2.7", table) == "eth0"
    assert D.route_interface("8.8.8.8", table) == "eth0"  # the default route
    assert D.route_interface("127.0.0.1", table) == "lo"  # loopback never goes through the table
    assert D.route_interface("not-an-ip", table) is None


def _route_line(iface, dest, mask, gw="0.0.0.0", metric=0, flags=0x1):
    def h(ip):  # the kernel prints IPv4 addresses as host-order (little-endian here) hex
        return "%08X" % struct.unpack("<I", bytes(int(x) for x in ip.split(".")))[0]
    return f"{iface}\t{h(dest)}\t{h(gw)}\t{flags:04X}\t0\t0\t{metric}\t{h(mask)}\t0\t0\t0"


def test_route_lookup_prefers_the_longest_prefix_then_the_lowest_metric():
    header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"
    table = "\n".join([header,
                       _route_line("eth0", "0.0.0.0", "0.0.0.0", "10.0.0.1", flags=0x3),
                       _route_line("ib0", "10.10.0.0", "255.255.0.0", metric=100),
                       _route_line("ens1", "10.10.0.0", "255.255.0.0", metric=10),
                       _route_line("docker0", "172.17.0.0", "255.255.0.0"),
                       _route_line("down0", "10.10.5.0", "255.255.255.0", flags=0x0)])  # not RTF_UP: ignored
    assert D.route_interface("10.10.5.9", table) == "ens1"
    assert D.route_interface("172.17.0.2", table) == "docker0"
    assert D.route_interface("93.184.216.34", table) == "eth0"


def test_network_info_uses_the_socket_ifname_the_backend_obeys():
    env = {"NCCL_SOCKET_IFNAME": "ib0", "GLOO_SOCKET_IFNAME": "eth9"}
    assert D.network_info("127.0.0.1", 29500, "nccl", env)["interface"] == "ib0"
    g = D.network_info("127.0.0.1", 29500, "gloo", env)
    assert g["interface"] == "eth9" and g["source"] == "GLOO_SOCKET_IFNAME" and g["nccl_socket_ifname"] == "ib0"
    lo = D.network_info("localhost", 29500, "gloo", {})
    assert lo["interface"] == "lo" and lo["local_ip"] == "127.0.0.1"


def test_relevant_env_keeps_nccl_gloo_and_launcher_variables_and_drops_secrets():
    env = {"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5", "GLOO_SOCKET_IFNAME": "eth0", "MASTER_ADDR": "node1",
           "NCCL_TOKEN_SECRET": "x", "HOME": "/root", "TORCH_NCCL_BLOCKING_WAIT": "1",
           "FI_PROVIDER": "efa"}
    assert D.relevant_env(env) == {"FI_PROVIDER": "efa", "GLOO_SOCKET_IFNAME": "eth0", "MASTER_ADDR": "node1",
                                   "NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5", "TORCH_NCCL_BLOCKING_WAIT": "1"}


def test_bus_bandwidth_factor_is_nccl_tests_all_reduce_formula():
    # nccl-tests doc/PERFORMANCE.md: busbw = algbw * 2(n-1)/n for AllReduce
    assert [D.busbw_factor(n) for n in (1, 2, 4, 8)] == [0.0, 1.0, 1.5, 1.75]


def _load_child():
    spec = importlib.util.spec_from_file_location("dist_workload", CHILD_PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_child_sweep_schedule_and_fault_parsing():
    c = _load_child()  # importable without torch
    sizes = c.sweep_sizes(1024, 64 << 20)
    assert len(sizes) == 17 and sizes[0] == 1024 and sizes[-1] == 64 << 20
    assert [c.sweep_iters(s) for s in (1024, 1 << 20, 2 << 20, 16 << 20, 32 << 20)] == \
        [(5, 20), (5, 20), (3, 10), (3, 10), (2, 5)]
    assert c.busbw_factor(8) == D.busbw_factor(8)
    assert c.parse_fault("rank1:hang", 1) == ("hang", "allreduce")
    assert c.parse_fault("rank1:hang", 0) is None
    assert c.parse_fault("rank0:exit@broadcast,rank3:kill", 3) == ("kill", "allreduce")
    assert c.parse_fault("rank0:exit@broadcast", 0) == ("exit", "broadcast")
    assert c.parse_fault("garbage", 0) is None


def test_child_imports_only_stdlib_and_torch():
    src = CHILD_PATH.read_text()
    imported = {ln.split()[1].split(".")[0] for ln in src.splitlines()
                if ln.strip().startswith(("import ", "from ")) and not ln.startswith("#")}
    assert imported <= set(sys.stdlib_module_names) | {"torch"}, imported


# blame(): who is at fault, on the shapes the real jobs above produce

def _res(status, kind=None, msg="", progress=None):
    return {"status": status, "error": {"kind": kind, "message": msg} if kind else None, "progress": progress}


def _p(seq, step, state, t=100.0):
    return {"seq": seq, "step": step, "state": state, "t": t}


ARR = {0: {"hostname": "a"}, 1: {"hostname": "b"}, 2: {"hostname": "c"}}


def test_blame_names_the_rank_that_never_joined_the_collective():
    results = {0: _res("fail", "collective", "Timed out", _p(3, "allreduce 1024 B", "calling")),
               1: _res("fail", "aborted", "stopped", _p(2, "init", "done")),
               2: _res("fail", "collective", "Timed out", _p(3, "allreduce 1024 B", "calling"))}
    out = D.blame(3, ARR, results, {}, 110.0, 5)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "stalled")]
    assert "finished 'init' (step 2, 10.0 s ago)" in out[0]["reason"]


def test_blame_prefers_the_stores_newer_progress_mark():
    results = {0: _res("fail", "collective", "x", _p(3, "allreduce", "calling")),
               1: _res("fail", "aborted", "x", _p(1, "device", "done"))}
    out = D.blame(2, ARR, results, {1: _p(3, "allreduce", "calling")}, 110.0, 5)
    assert out == []  # both reached step 3: the collective itself failed


def test_blame_does_not_blame_a_crash_while_waiting_for_a_rank_that_is_behind():
    # NCCL's watchdog aborts a survivor (SIGABRT) while it waits for a rank that never joined
    results = {0: _res("fail", "crash", "child killed by signal 6 (SIGABRT) in stage 'allreduce'",
                       _p(3, "allreduce", "calling")),
               1: _res("fail", "aborted", "x", _p(2, "init", "done"))}
    assert [(c["rank"], c["kind"]) for c in D.blame(2, ARR, results, {}, 110.0, 5)] == [(1, "stalled")]


def test_blame_own_failures_missing_ranks_and_not_started_jobs():
    results = {0: _res("fail", "collective", "x", _p(2, "init", "calling")),
               1: _res("fail", "device", "stage 'device': CUDA failed to initialise", _p(1, "device", "calling"))}
    out = D.blame(3, {0: {}, 1: {}}, results, {}, 110.0, 5)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "device"), (2, "never-arrived")]
    out = D.blame(2, ARR, {0: _res("fail", "collective", "x", _p(3, "allreduce", "calling"))},
                  {1: _p(3, "allreduce", "calling", t=108.0)}, 110.0, 5, terminated=True)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "no-result")]
    assert "the launcher ended the job" in out[0]["reason"] and "in 'allreduce' (step 3, 2.0 s ago)" in out[0]["reason"]
    # the check-in failed: ranks that arrived were never started and are not at fault
    out = D.blame(3, {0: {}, 2: {}}, {0: _res("fail", "aborted", "not started")}, {}, 110.0, 5, started=False)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "never-arrived")]


def test_blame_on_a_passing_job_is_empty():
    ok = {r: _res("pass", progress=_p(20, "bandwidth", "done")) for r in range(3)}
    assert D.blame(3, ARR, ok, {}, 110.0, 5) == []


def test_two_ranks_on_one_gpu_are_named():
    def res(host, uuid):
        return {"hostname": host, "status": "pass",
                "stages": [{"name": "device", "verdict": "pass", "evidence": {"uuid": uuid}}]}
    results = {0: res("n1", "GPU-aaa"), 1: res("n1", "GPU-aaa"), 2: res("n2", "GPU-aaa"), 3: res("n1", "GPU-bbb")}
    out = D.shared_gpus(results)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "shared-gpu")]
    assert "ranks 0, 1 on n1 use the same GPU (UUID GPU-aaa)" in out[0]["reason"]
    assert D.shared_gpus({0: {"hostname": "n1", "status": "pass", "stages": []}}) == []  # CPU: no UUIDs


def test_show_pii_keeps_the_host_names_and_says_so():
    from cudadoctor.commands.smoke import shareable_distributed

    rep = {"ranks": [{"rank": 0, "hostname": "gpu-node-17"}, {"rank": 1, "hostname": "gpu-node-18"}],
           "master": {"addr": "gpu-node-17", "port": 29500}, "env": {"MASTER_ADDR": "gpu-node-17"},
           "error": {"message": "rank 1 on gpu-node-18 did not arrive"},
           "membership": {"hosts": {"gpu-node-17": [0], "gpu-node-18": [1]}}}
    red = json.dumps(shareable_distributed(rep, show_pii=False))
    assert "gpu-node-1" not in red and red.count("host-") >= 7
    assert json.dumps(shareable_distributed(rep, show_pii=True)) == json.dumps(rep)
    ip = {"ranks": [{"hostname": "gpu-node-17"}], "env": {"MASTER_ADDR": "10.0.0.5"}}
    assert shareable_distributed(ip, show_pii=False)["env"]["MASTER_ADDR"] == "10.0.0.5"  # addresses are kept
