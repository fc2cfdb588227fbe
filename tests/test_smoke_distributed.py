"""`cudadoctor smoke --distributed`: the one distributed smoke. Real torchrun jobs over Gloo on this machine
(training the MNIST network with DDP, exact collectives, the bandwidth sweep, --per-rank files, `fleet` on
them), faults injected into one rank (hang, exit, kill, never checking in, a wrong value), plus the pure
parts (the launch parser, route lookup, blame, bandwidth formula, rendering, the job report's rows).

The torchrun tests need an interpreter with torch: this one if it imports torch (CI's .venv), else
$CUDADOCTOR_TEST_TORCH_PYTHON or /work/venvs/t214/bin/python; they run the `torchrun` beside it (or
`python -m torch.distributed.run`) with PYTHONPATH pointing at this checkout. Sizes are kept small with
CUDADOCTOR_SMOKE_SWEEP and --rank-timeout 5 so that each fault job takes seconds.
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

from cudadoctor import fleet
from cudadoctor.probes import network as N
from cudadoctor.commands._smoke_distributed import rank_path
from cudadoctor.smoke import distributed as D
from cudadoctor.smoke import job as J
from cudadoctor.smoke import kit
from cudadoctor.render.smoke import render
from cudadoctor.smoke.runner import Watched

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHILD_PATH = REPO / "cudadoctor" / "smoke" / "dist_workload.py"
MNIST_ROOT = Path(os.environ.get("CUDADOCTOR_TEST_MNIST_ROOT") or REPO.parent / "shared" / "data")
T = 5.0  # --rank-timeout in the fault tests
HOST = socket.gethostname()


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
needs_mnist = pytest.mark.skipif(not (MNIST_ROOT / "MNIST" / "raw" / "train-images-idx3-ubyte").is_file(),
                                 reason=f"real MNIST not found under {MNIST_ROOT} (CUDADOCTOR_TEST_MNIST_ROOT)")


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


def _clean_env(**extra):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("CUDADOCTOR_SMOKE_", "MASTER_", "RANK", "WORLD_", "LOCAL_RANK", "SLURM"))}
    e.update({k: str(v) for k, v in extra.items()})
    return e


@pytest.fixture
def torchrun(tmp_path, job_pythonpath):
    return lambda *args, **kw: _torchrun(tmp_path, job_pythonpath, *args, **kw)


def _torchrun(tmp_path, pythonpath, *args, fault=None, nproc=2, sweep="16384:2", timeout=240, env=None):
    """A real torchrun job of `python -m cudadoctor smoke --distributed ...`; JSON job report -> tmp_path/report.json."""
    script = Path(TORCH_PY).parent / "torchrun"
    launcher = [str(script)] if script.exists() else [TORCH_PY, "-m", "torch.distributed.run"]
    e = _clean_env(PYTHONPATH=pythonpath, NO_COLOR="1", CUDADOCTOR_SMOKE_SWEEP=sweep, **(env or {}))
    if fault:
        e["CUDADOCTOR_SMOKE_FAULT"] = fault
    out = tmp_path / "report.json"
    cmd = launcher + ["--standalone", "--nproc-per-node", str(nproc), "-m", "cudadoctor", "smoke", "--distributed",
                      "--format", "json", "-o", str(out), *args]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout, cwd=tmp_path)
    wall = time.monotonic() - t0
    rep = json.loads(out.read_text()) if out.exists() else None
    return p, rep, wall


def culprit_ranks(rep):
    return [c["rank"] for c in rep["culprits"]]


def stage_of(row, name):
    return next(s for s in row["stages"] if s["name"] == name)


def _names_host(text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(HOST)}(?![A-Za-z0-9_-])", text, re.I) is not None


# ---------------------------------------------------------------------------------------------------------
# Real jobs over Gloo on this machine
# ---------------------------------------------------------------------------------------------------------

@needs_torch
@needs_mnist
def test_two_ranks_train_mnist_with_ddp_and_pass_with_exact_collectives_and_bandwidth(torchrun, tmp_path):
    p, rep, wall = torchrun("--device", "cpu", "--backend", "gloo", "--rank-timeout", "30", "--data-dir", str(MNIST_ROOT),
                            "--per-rank",
                            sweep="65536:3", env={"CUDADOCTOR_PSEUDONYM_KEY": "site-key-for-this-test"})
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    assert rep["kind"] == "cudadoctor-smoke-job" and rep["schema_version"] == 2
    assert rep["status"] == "pass" and rep["backend"] == "gloo" and rep["world_size"] == 2
    assert [r["rank"] for r in rep["ranks"]] == [0, 1]
    for r in rep["ranks"]:
        assert r["status"] == "pass"
        assert [s["name"] for s in r["stages"]] == list(D.STAGES)
        assert all(s["verdict"] == "pass" for s in r["stages"])
        ar = stage_of(r, "all-reduce")["evidence"]
        assert [c["exact"] for c in ar["checks"]] == [True, True] and ar["expected"] == "3*(1 + i%7)"
        assert ar["checks"][1]["elements"] == (4 << 20) // 4 + 3
        assert stage_of(r, "broadcast")["evidence"]["wrong_elements"] == 0
        tr = stage_of(r, "training")["evidence"]  # every rank saw the same (all-reduced) accuracy
        assert tr["test_accuracy"] == rep["training"]["test_accuracy"]
    # the MNIST network trained with DDP across both ranks to the bar, replicas identical
    tr = rep["training"]
    assert tr["test_accuracy"] >= 0.97 and tr["accuracy_bar"] == 0.97 and tr["replicas_identical"] is True
    assert tr["ranks"] == 2 and tr["per_rank_batch"] == 256 and tr["batch"] == 512
    assert tr["loss_last"] < 0.5 * tr["loss_first"] and tr["epochs"] <= 2.0
    assert rep["data"]["n_train"] == 60000 and all(v == "official" for v in rep["data"]["checksums"].values())
    # bandwidth: 1 KiB .. 64 KiB, nccl-tests' formulas, the same (slowest-rank) time on both ranks
    bw = rep["bandwidth"]
    assert [row["bytes"] for row in bw["rows"]] == [1024 << i for i in range(7)]
    for row in bw["rows"]:
        assert row["iters"] == 3 and row["time_us"] > 0
        assert row["algbw_gbps"] == pytest.approx(row["bytes"] / (row["time_us"] * 1e-6) / 1e9, rel=1e-3)
        assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * 2 * (2 - 1) / 2, rel=1e-5)
    other = stage_of(rep["ranks"][1], "bandwidth")["evidence"]
    assert [x["time_us"] for x in other["rows"]] == [x["time_us"] for x in bw["rows"]]
    assert "not a GPU interconnect" in bw["note"]
    # launch facts in the report
    assert rep["launcher"]["kind"] == "torchrun" and rep["launcher"]["agent_store"] is True
    assert rep["env"]["WORLD_SIZE"] == "2" and rep["env"]["MASTER_ADDR"] == rep["master"]["addr"]
    assert rep["network"]["interface"] == "lo" and rep["network"]["source"].startswith("route to MASTER_ADDR")
    assert rep["culprits"] == [] and rep["error"] is None
    # --per-rank: one file per rank beside the job report, for `fleet`
    files = sorted(tmp_path.glob("report.rank*.json"))
    assert [f.name for f in files] == ["report.rank0.json", "report.rank1.json"]
    docs = [json.loads(f.read_text()) for f in files]
    assert [d["kind"] for d in docs] == ["cudadoctor-smoke-rank"] * 2
    assert [(d["distributed"]["rank"], d["distributed"]["world_size"], d["status"]) for d in docs] == \
        [(0, 2, "pass"), (1, 2, "pass")]
    # redacted like every output: no host name anywhere; with a site key one host is one pseudonym
    for text in [f.read_text() for f in [tmp_path / "report.json", *files]] + [p.stdout, p.stderr]:
        assert not _names_host(text), text[:2000]
    hosts = {r["hostname"] for r in rep["ranks"]} | {d["distributed"]["host"] for d in docs}
    assert len(hosts) == 1 and hosts.pop().startswith("host-")
    # the text and markdown renderings of that real report
    text = render(rep, "text")
    assert text.splitlines()[0] == "cudadoctor smoke --distributed (gloo, 2 ranks, device cpu): PASS"
    assert "64 KiB" in text and "busbw GB/s" in text and "interface lo" in text
    assert "all-reduce, exact on every rank" in text and "broadcast from rank 0, exact on every rank" in text
    assert "DDP training on every rank: test accuracy 0.9" in text
    md = render(rep, "markdown")  # the text, fenced, under a heading
    assert md.startswith("## \\`cudadoctor smoke --distributed\\` \\(gloo, 2 ranks, device cpu\\): PASS\n\n```text\n")
    assert text in md and md.rstrip().endswith("```")
    # `fleet` reads the job report and the rank files, and counts each rank once
    for paths in ([tmp_path / "report.json"], files, [tmp_path]):
        f = subprocess.run([sys.executable, "-m", "cudadoctor", "fleet", *map(str, paths)], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
        assert f.returncode == 0, f.stdout + f.stderr
        assert "Smoke (2 runs on 1 host, world size 2): 2 passed, 0 failed" in f.stdout, f.stdout
        assert f.stdout.rstrip().endswith("✓ smoke: all 2 runs passed")
    assert wall < 150


@needs_torch
def test_hung_rank_is_named_within_the_bound_and_the_job_ends(torchrun):
    p, rep, wall = torchrun("--device", "cpu", "--synthetic", "--rank-timeout", str(T), fault="all-reduce:hang@1")
    assert p.returncode == 1
    assert rep["status"] == "fail" and culprit_ranks(rep) == [1]
    c = rep["culprits"][0]
    assert c["kind"] == "stalled" and "rank 1 stalled" in c["reason"] and "finished 'init'" in c["reason"]
    # rank 0 waited in the all-reduce and timed out on the process group's bound, not forever
    r0 = rep["ranks"][0]
    assert "Timed out" in stage_of(r0, "all-reduce")["message"]
    # the bound: from rank 1's last progress (when it stalled) to the report, at most the rank timeout
    # plus the watchdog grace and the kill grace; the whole job well under a minute
    stalled_at = rep["ranks"][1]["progress"]["t"]
    assert rep["generated_unix"] - stalled_at < T + 10 + 5
    assert wall < 90  # mostly two `import torch` per rank: 60 s is not enough on a machine under heavy load
    # rank 1 stopped at once when rank 0 failed, and its own stack at that moment is in the report
    assert rep["ranks"][1]["error"]["kind"] == "aborted"
    assert "inject_fault" in rep["ranks"][1]["stderr_tail"]
    assert "rank 1 stalled" in render(rep, "text")


@needs_torch
def test_rank_whose_workload_exits_is_named_and_the_others_stop(torchrun):
    p, rep, wall = torchrun("--device", "cpu", "--synthetic", "--rank-timeout", str(T), fault="all-reduce:exit@1")
    assert p.returncode == 1
    assert culprit_ranks(rep) == [1]
    assert rep["culprits"][0]["kind"] == "crash"
    assert "child exited with code 17 in stage 'all-reduce'" in rep["culprits"][0]["reason"]
    assert rep["ranks"][0]["error"]["kind"] in ("aborted", "collective")
    assert wall < 90


@needs_torch
def test_killed_rank_worker_is_named_by_rank_0_when_torchrun_tears_the_job_down(torchrun):
    p, rep, wall = torchrun("--device", "cpu", "--synthetic", "--rank-timeout", str(T), fault="all-reduce:kill@1")
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
    p, rep, wall = torchrun("--device", "cpu", "--synthetic", "--rank-timeout", str(T), fault="check-in:hang@1")
    assert p.returncode != 0
    assert culprit_ranks(rep) == [1] and rep["culprits"][0]["kind"] == "never-arrived"
    assert "never checked in within 5 s" in rep["culprits"][0]["reason"]
    assert T <= rep["elapsed_s"] < T + 5  # rank 0 waited the bound, not longer
    assert rep["ranks"][1]["status"] == "missing" and rep["ranks"][0]["error"]["kind"] == "aborted"
    assert wall < 60


@needs_torch
def test_a_wrong_contribution_fails_the_exact_all_reduce_on_every_rank(torchrun):
    p, rep, _ = torchrun("--device", "cpu", "--synthetic", "--rank-timeout", "30", fault="all-reduce:wrong@1")
    assert p.returncode == 1
    assert culprit_ranks(rep) == [0, 1]  # a sum cannot say whose term was wrong: every rank saw it
    for r in rep["ranks"]:
        st = stage_of(r, "all-reduce")
        assert st["verdict"] == "fail" and "is WRONG" in st["message"] and "element 0 is 4, expected 3" in st["message"]
        assert stage_of(r, "training")["message"] == "not run: stage 'all-reduce' did not pass on this rank"


@needs_torch
def test_cuda_on_this_gpu_less_machine_fails_the_device_stage_of_every_rank(torchrun):
    p, rep, wall = torchrun("--synthetic", "--rank-timeout", str(T))
    assert p.returncode == 1
    assert rep["backend"] == "nccl" and rep["device"] == "cuda"
    assert [r["device"] for r in rep["ranks"]] == ["cuda:0", "cuda:1"]
    dev0 = stage_of(rep["ranks"][0], "device")
    assert dev0["verdict"] == "fail"
    assert ("CUDA failed to initialise" in dev0["message"]) or ("CPU-only build" in dev0["message"])
    # whichever rank failed first stops the other; every rank named is named for its device
    assert rep["culprits"] and all(c["kind"] == "device" for c in rep["culprits"])
    assert "stage 'device'" in rep["culprits"][0]["reason"]
    assert wall < 60


@needs_torch
def test_single_rank_from_slurm_variables(tmp_path, job_pythonpath):
    """srun's variables, one task: the rank hosts the store on 127.0.0.1; nothing to measure a link with."""
    r = subprocess.run([TORCH_PY, "-m", "cudadoctor", "smoke", "--distributed", "--device", "cpu", "--synthetic",
                        "--rank-timeout", "30"], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env=_clean_env(PYTHONPATH=job_pythonpath, SLURM_PROCID="0", SLURM_NTASKS="1", SLURM_LOCALID="0",
                                      SLURM_JOB_ID="4242", OMP_NUM_THREADS="1", NO_COLOR="1",
                                      MASTER_PORT=str(29500 + os.getpid() % 400)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "cudadoctor smoke --distributed (gloo, 1 ranks, device cpu): PASS"
    assert "master 127.0.0.1:" in r.stdout and "launcher slurm" in r.stdout
    assert "DDP training on every rank: test accuracy" in r.stdout


# ---------------------------------------------------------------------------------------------------------
# CLI errors: not launched as a job, wrong options, no data
# ---------------------------------------------------------------------------------------------------------

def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "cudadoctor", "smoke", "--distributed", *args], capture_output=True,
                          text=True, env=_clean_env(**(env or {})), timeout=60)


def test_without_a_launcher_is_one_line_and_exit_2():
    for extra in ([], ["--per-rank"]):
        p = _cli("--device", "cpu", *extra)
        assert p.returncode == 2
        assert p.stderr.strip().splitlines() == [
            "cudadoctor: error: --distributed runs as one rank of a launch: RANK/WORLD_SIZE (or SLURM_PROCID/"
            "SLURM_NTASKS) are not set. Start it with: torchrun --standalone --nproc-per-node N -m cudadoctor "
            "smoke --distributed (or srun)"]


@pytest.mark.parametrize("args,needle", [
    (["--device", "all"], "--distributed takes --device cuda"),
    (["--device", "cpu", "--download"], "--download does not go with --distributed"),
    (["--device", "cpu", "--data-dir", "/nonexistent/mnist"], "MNIST is not in --data-dir /nonexistent/mnist"),
])
def test_bad_options_are_one_line_and_exit_2(args, needle):
    p = _cli(*args, env={"RANK": "0", "WORLD_SIZE": "1"})
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1, p.stderr


@pytest.mark.parametrize("args,env,needle", [
    (["--device", "cpu", "--backend", "nccl"], {}, "the NCCL backend needs GPUs: --backend nccl goes with --device cuda"),
    (["--device", "cpu"], {"CUDADOCTOR_SMOKE_BACKEND": "mpi"}, "CUDADOCTOR_SMOKE_BACKEND: backend 'mpi': expected one of"),
    (["--backend", "tcp"], {}, "Invalid value for '--backend'"),
])
def test_bad_backends_are_one_line_and_exit_2(args, env, needle):
    p = _cli(*args, env={"RANK": "0", "WORLD_SIZE": "1", **env})
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_backend_needs_distributed():
    p = subprocess.run([sys.executable, "-m", "cudadoctor", "smoke", "--backend", "gloo"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and "--backend goes with --distributed" in p.stderr


def test_per_rank_and_rank_timeout_need_distributed():
    p = subprocess.run([sys.executable, "-m", "cudadoctor", "smoke", "--per-rank"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and "--per-rank and --rank-timeout go with --distributed" in p.stderr


# ---------------------------------------------------------------------------------------------------------
# The one launch parser
# ---------------------------------------------------------------------------------------------------------

def test_launch_from_torchrun():
    env = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "MASTER_ADDR": "gpu001", "MASTER_PORT": "29400",
           "TORCHELASTIC_RUN_ID": "abc", "TORCHELASTIC_USE_AGENT_STORE": "True"}
    info = D.launch_info(env)
    assert {k: info[k] for k in ("rank", "world_size", "local_rank", "master_addr", "master_port")} == \
        {"rank": 3, "world_size": 8, "local_rank": 3, "master_addr": "gpu001", "master_port": 29400}
    assert info["launcher"] == "torchrun" and info["agent_store"] is True and info["run_id"] == "abc"


def test_launch_from_slurm():
    env = {"SLURM_PROCID": "9", "SLURM_NTASKS": "16", "SLURM_LOCALID": "1", "MASTER_ADDR": "gpu001",
           "SLURM_JOB_ID": "77"}
    info = D.launch_info(env)
    assert (info["rank"], info["world_size"], info["local_rank"], info["master_port"]) == (9, 16, 1, 29500)
    assert info["launcher"] == "slurm" and info["run_id"] == "77" and info["agent_store"] is False


def test_launch_single_rank_defaults():
    info = D.launch_info({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"})
    assert info["master_addr"] == "127.0.0.1" and info["local_rank"] == 0


@pytest.mark.parametrize("env,needle", [
    ({}, "RANK/WORLD_SIZE (or SLURM_PROCID/SLURM_NTASKS) are not set"),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}, "MASTER_ADDR is not set"),
    ({"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "h"}, "RANK=2 is not in 0..WORLD_SIZE-1"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h"}, "LOCAL_RANK (or SLURM_LOCALID) is not set"),
    ({"RANK": "x", "WORLD_SIZE": "2"}, "RANK='x' is not an integer"),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "h", "MASTER_PORT": "70000"},
     "MASTER_PORT=70000 is not a TCP port"),
])
def test_launch_info_rejects_bad_environments(env, needle):
    with pytest.raises(D.LaunchError) as e:
        D.launch_info(env)
    assert needle in str(e.value)


def test_rank_file_paths():
    assert rank_path("out/job.json", 3) == "out/job.rank3.json"
    assert rank_path("out/{host}-{rank}.json", 3) == "out/{host}-{rank}.json"  # emit() expands it per rank
    assert rank_path(None, 1) == "cudadoctor-smoke.rank1.json"


# ---------------------------------------------------------------------------------------------------------
# Pure parts
# ---------------------------------------------------------------------------------------------------------

def test_route_lookup_on_this_machines_recorded_route_table():
    # /proc/net/route of this machine (eth0 192.0.2.2/24, default via 192.0.2.1), recorded as is
    table = (FIXTURES / "net" / "proc_net_route.txt").read_text()
    rows = N.parse_route_table(table)
    assert [(r["iface"], str(r["destination"]), r["prefix"]) for r in rows] == [("eth0", "0.0.0.0", 0),
                                                                                 ("eth0", "192.0.2.0", 24)]
    assert str(rows[0]["gateway"]) == "192.0.2.1"
    assert N.route_interface("192.0.2.7", table) == "eth0"
    assert N.route_interface("8.8.8.8", table) == "eth0"  # the default route
    assert N.route_interface("127.0.0.1", table) == "lo"  # loopback never goes through the table
    assert N.route_interface("not-an-ip", table) is None


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
    assert N.route_interface("10.10.5.9", table) == "ens1"
    assert N.route_interface("172.17.0.2", table) == "docker0"
    assert N.route_interface("93.184.216.34", table) == "eth0"


def test_network_info_uses_the_socket_ifname_the_backend_obeys():
    env = {"NCCL_SOCKET_IFNAME": "ib0", "GLOO_SOCKET_IFNAME": "eth9"}
    assert N.network_info("127.0.0.1", 29500, "nccl", env)["interface"] == "ib0"
    g = N.network_info("127.0.0.1", 29500, "gloo", env)
    assert g["interface"] == "eth9" and g["source"] == "GLOO_SOCKET_IFNAME" and g["nccl_socket_ifname"] == "ib0"
    lo = N.network_info("localhost", 29500, "gloo", {})
    assert lo["interface"] == "lo" and lo["local_ip"] == "127.0.0.1"


def test_relevant_env_keeps_nccl_gloo_and_launcher_variables_and_drops_secrets():
    env = {"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5", "GLOO_SOCKET_IFNAME": "eth0", "MASTER_ADDR": "node1",
           "NCCL_TOKEN_SECRET": "x", "HOME": "/root", "TORCH_NCCL_BLOCKING_WAIT": "1",
           "FI_PROVIDER": "efa"}
    assert D.relevant_env(env) == {"FI_PROVIDER": "efa", "GLOO_SOCKET_IFNAME": "eth0", "MASTER_ADDR": "node1",
                                   "NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5", "TORCH_NCCL_BLOCKING_WAIT": "1"}


def _load_child():
    spec = importlib.util.spec_from_file_location("dist_workload_under_test", CHILD_PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_child_sweep_schedule_and_the_one_fault_grammar():
    c = _load_child()  # importable without torch
    sizes = c.sweep_sizes(1024, 64 << 20)
    assert len(sizes) == 17 and sizes[0] == 1024 and sizes[-1] == 64 << 20
    assert [c.sweep_iters(s) for s in (1024, 1 << 20, 2 << 20, 16 << 20, 32 << 20)] == \
        [(5, 20), (5, 20), (3, 10), (3, 10), (2, 5)]
    # nccl-tests doc/PERFORMANCE.md: busbw = algbw * 2(n-1)/n for AllReduce
    assert [c.busbw_factor(n) for n in (1, 2, 4, 8)] == [0.0, 1.0, 1.5, 1.75]
    assert c.STAGES == D.STAGES
    # CUDADOCTOR_SMOKE_FAULT=<stage>:<kind>[@<rank>][,...]: the single-GPU smoke's grammar, with a rank
    assert kit.fault_for("all-reduce", 1, "all-reduce:hang@1") == "hang"
    assert kit.fault_for("all-reduce", 0, "all-reduce:hang@1") is None
    assert kit.fault_for("training", None, "training:abort") == "abort"  # no rank: every process
    assert kit.fault_for("broadcast", 3, "init:exit@0,broadcast:kill@3") == "kill"
    assert kit.fault_for("check-in", 1, "check-in:hang@1") == "hang"
    assert kit.fault_for("init", 0, "garbage") is None


def test_a_rank_killed_after_its_last_stage_keeps_its_verdicts():
    rank = D.Rank(D.launch_info({"RANK": "0", "WORLD_SIZE": "1"}), {"device": "cpu", "rank_timeout_s": 5,
                                                                    "timeout_s": 60}, sys.executable, {})
    res = {"state": "finished", "status": "pass", "current": None,
           "stages": [{"name": s, "verdict": "pass", "message": "", "evidence": {}} for s in D.STAGES]}
    row = rank._assemble(res, Watched(-15, False, "terminated (SIGTERM)", "SIGTERM", 3.0, ""))
    assert row["status"] == "pass" and len(row["stages"]) == len(D.STAGES) and row["error"] is None
    assert "after its last stage" in row["notes"][0]


def test_a_rank_that_dies_mid_stage():
    rank = D.Rank(D.launch_info({"RANK": "0", "WORLD_SIZE": "1"}), {"device": "cpu", "rank_timeout_s": 5,
                                                                    "timeout_s": 60}, sys.executable, {})
    res = {"state": "running", "current": {"name": "bandwidth", "device": "cpu"},
           "stages": [{"name": s, "verdict": "pass", "message": ""} for s in D.STAGES[:4]]}
    row = rank._assemble(res, Watched(-9, False, None, None, 3.0, "Killed"))
    assert row["status"] == "fail" and row["error"]["kind"] == "crash" and row["error"]["stage"] == "bandwidth"
    assert [(s["name"], s["verdict"]) for s in row["stages"]] == [
        ("device", "pass"), ("init", "pass"), ("all-reduce", "pass"), ("broadcast", "pass"), ("bandwidth", "fail"),
        ("training", "skip")]
    assert "signal 9 (SIGKILL)" in row["error"]["message"] and row["stderr_tail"] == "Killed"


def test_backend_choice():
    assert [D.choose_backend(d, None) for d in ("cuda", "cpu")] == ["nccl", "gloo"]  # auto: today's behaviour
    assert D.choose_backend("cuda", "gloo") == "gloo" and D.choose_backend("cuda", " NCCL ") == "nccl"
    assert D.choose_backend("cpu", "auto") == "gloo" and D.choose_backend("cpu", "gloo") == "gloo"
    for device, name, needle in (("cpu", "nccl", "needs GPUs"), ("cuda", "mpi", "expected one of auto, nccl, gloo")):
        with pytest.raises(D.LaunchError, match=needle):
            D.choose_backend(device, name)


def test_rank_to_device_mapping():
    place = _load_child().rank_device  # pure: (device, backend, local rank, GPUs visible, local world size)
    assert place("cpu", "gloo", 3, 0) == ("cpu", None)
    assert [place("cuda", b, r, 8)[0] for b in ("nccl", "gloo") for r in (0, 7)] == ["cuda:0", "cuda:7"] * 2
    # Gloo with more ranks on a host than GPUs: ranks share them, round robin
    assert [place("cuda", "gloo", r, 1, 2) for r in (0, 1)] == [("cuda:0", None), ("cuda:0", None)]
    assert [place("cuda", "gloo", r, 2, 5)[0] for r in range(5)] == ["cuda:0", "cuda:1", "cuda:0", "cuda:1", "cuda:0"]
    # no GPU at all: cuda:LOCAL_RANK, and the device stage says why (as before)
    assert place("cuda", "gloo", 1, 0) == ("cuda:1", None) and place("cuda", "nccl", 1, 0) == ("cuda:1", None)


def test_nccl_with_more_ranks_than_gpus_fails_early_naming_the_counts():
    place = _load_child().rank_device
    assert place("cuda", "nccl", 0, 1, 2) == ("cuda:0", None)  # rank 0 has its GPU; rank 1 is the one that cannot
    dev, why = place("cuda", "nccl", 1, 1, 2)
    assert dev == "cuda:1" and why == ("NCCL cannot share a GPU between ranks: 2 ranks on this host, 1 GPU(s) visible "
                                       "(use --backend gloo)")
    _, why = place("cuda", "nccl", 3, 2)  # no LOCAL_WORLD_SIZE (srun): the local rank says it
    assert "more than 2 ranks (local rank 3) on this host, 2 GPU(s) visible" in why and "\n" not in why
    assert D.launch_info({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                          "MASTER_ADDR": "m"})["local_world_size"] == 2


def test_gloo_ranks_sharing_a_gpu_on_purpose_are_not_at_fault():
    def res(r):
        return {"rank": r, "hostname": "n1", "status": "pass", "stages": [
            {"name": "device", "verdict": "pass", "evidence": {"uuid": "GPU-aaa"}}]}
    info = D.launch_info({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "m"})
    ctx = {"rank": 0, "world_size": 2, "device": "cuda", "rank_timeout_s": 5, "info": info, "network": {}, "env": {},
           "terminated": False, "elapsed_s": 1.0}
    results = {0: res(0), 1: res(1)}
    gloo = J.combine(dict(ctx, backend="gloo"), results, {0: {}, 1: {}}, {}, 100.0)
    assert gloo["status"] == "pass" and gloo["backend"] == "gloo" and gloo["culprits"] == []
    nccl = J.combine(dict(ctx, backend="nccl"), results, {0: {}, 1: {}}, {}, 100.0)
    assert nccl["status"] == "fail" and [c["kind"] for c in nccl["culprits"]] == ["shared-gpu"]


# blame(): who is at fault, on the shapes the real jobs above produce

def _res(status, kind=None, msg="", progress=None):
    return {"status": status, "error": {"kind": kind, "message": msg} if kind else None, "progress": progress}


def _p(seq, step, state, t=100.0):
    return {"seq": seq, "step": step, "state": state, "t": t}


ARR = {0: {"hostname": "a"}, 1: {"hostname": "b"}, 2: {"hostname": "c"}}


def test_blame_names_the_rank_that_never_joined_the_collective():
    results = {0: _res("fail", "collective", "Timed out", _p(3, "all-reduce 1024 B", "calling")),
               1: _res("fail", "aborted", "stopped", _p(2, "init", "done")),
               2: _res("fail", "collective", "Timed out", _p(3, "all-reduce 1024 B", "calling"))}
    out = J.blame(3, ARR, results, {}, 110.0, 5)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "stalled")]
    assert "finished 'init' (step 2, 10.0 s ago)" in out[0]["reason"]


def test_blame_prefers_the_stores_newer_progress_mark():
    results = {0: _res("fail", "collective", "x", _p(3, "all-reduce", "calling")),
               1: _res("fail", "aborted", "x", _p(1, "device", "done"))}
    out = J.blame(2, ARR, results, {1: _p(3, "all-reduce", "calling")}, 110.0, 5)
    assert out == []  # both reached step 3: the collective itself failed


def test_blame_does_not_blame_a_crash_while_waiting_for_a_rank_that_is_behind():
    # NCCL's watchdog aborts a survivor (SIGABRT) while it waits for a rank that never joined
    results = {0: _res("fail", "crash", "child killed by signal 6 (SIGABRT) in stage 'all-reduce'",
                       _p(3, "all-reduce", "calling")),
               1: _res("fail", "aborted", "x", _p(2, "init", "done"))}
    assert [(c["rank"], c["kind"]) for c in J.blame(2, ARR, results, {}, 110.0, 5)] == [(1, "stalled")]


def test_blame_own_failures_missing_ranks_and_not_started_jobs():
    results = {0: _res("fail", "collective", "x", _p(2, "init", "calling")),
               1: _res("fail", "device", "stage 'device': CUDA failed to initialise", _p(1, "device", "calling"))}
    out = J.blame(3, {0: {}, 1: {}}, results, {}, 110.0, 5)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "device"), (2, "never-arrived")]
    out = J.blame(2, ARR, {0: _res("fail", "collective", "x", _p(3, "all-reduce", "calling"))},
                  {1: _p(3, "all-reduce", "calling", t=108.0)}, 110.0, 5, terminated=True)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "no-result")]
    assert "the launcher ended the job" in out[0]["reason"] and "in 'all-reduce' (step 3, 2.0 s ago)" in out[0]["reason"]
    # the check-in failed: ranks that arrived were never started and are not at fault
    out = J.blame(3, {0: {}, 2: {}}, {0: _res("fail", "aborted", "not started")}, {}, 110.0, 5, started=False)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "never-arrived")]


def test_blame_on_a_passing_job_is_empty():
    ok = {r: _res("pass", progress=_p(20, "bandwidth", "done")) for r in range(3)}
    assert J.blame(3, ARR, ok, {}, 110.0, 5) == []


def test_a_rank_with_no_data_is_at_fault_not_a_collective():
    st = [{"name": "training", "verdict": "fail", "message": "no data on rank 1: MNIST not found"}]
    assert D._stage_error(st)["kind"] == "training"
    st = [{"name": "training", "verdict": "fail", "message": "RuntimeError: Connection closed by peer"}]
    assert D._stage_error(st)["kind"] == "collective"


def test_two_ranks_on_one_gpu_are_named():
    def res(host, uuid):
        return {"hostname": host, "status": "pass",
                "stages": [{"name": "device", "verdict": "pass", "evidence": {"uuid": uuid}}]}
    results = {0: res("n1", "GPU-aaa"), 1: res("n1", "GPU-aaa"), 2: res("n2", "GPU-aaa"), 3: res("n1", "GPU-bbb")}
    out = J.shared_gpus(results)
    assert [(c["rank"], c["kind"]) for c in out] == [(1, "shared-gpu")]
    assert "ranks 0, 1 on n1 use the same GPU (UUID GPU-aaa)" in out[0]["reason"]
    assert J.shared_gpus({0: {"hostname": "n1", "status": "pass", "stages": []}}) == []  # CPU: no UUIDs


def test_show_pii_keeps_the_host_names_and_says_so():
    from cudadoctor.commands._smoke_policy import shareable_distributed

    rep = {"ranks": [{"rank": 0, "hostname": "gpu-node-17"}, {"rank": 1, "hostname": "gpu-node-18"}],
           "master": {"addr": "gpu-node-17", "port": 29500}, "env": {"MASTER_ADDR": "gpu-node-17"},
           "error": {"message": "rank 1 on gpu-node-18 did not arrive"},
           "membership": {"hosts": {"gpu-node-17": [0], "gpu-node-18": [1]}}}
    red = json.dumps(shareable_distributed(rep, show_pii=False))
    assert "gpu-node-1" not in red and red.count("host-") >= 7
    assert json.dumps(shareable_distributed(rep, show_pii=True)) == json.dumps(rep)
    ip = {"ranks": [{"hostname": "gpu-node-17"}], "env": {"MASTER_ADDR": "10.0.0.5"}}
    assert shareable_distributed(ip, show_pii=False)["env"]["MASTER_ADDR"] == "10.0.0.5"  # addresses are kept


# ---------------------------------------------------------------------------------------------------------
# fleet reads every smoke output: single GPU, job report, rank file, and the previous release's shapes
# ---------------------------------------------------------------------------------------------------------

def _row(rank, status, stage=None, msg=""):
    stages = [{"name": "device", "verdict": "pass", "evidence": {}}]
    if stage:
        stages.append({"name": stage, "verdict": "fail", "message": msg, "evidence": {}})
    return {"rank": rank, "hostname": f"host-{rank % 2}", "status": status, "stages": stages,
            "error": {"kind": "x", "message": msg} if status != "pass" else None}


@pytest.mark.parametrize("kind,extra", [("cudadoctor-smoke-job", {"schema_version": 2}),
                                        ("cudadoctor-smoke-distributed-combined", {"schema": 1})])
def test_fleet_reads_a_job_report_as_one_run_per_rank(kind, extra):
    doc = {"kind": kind, **extra, "status": "fail", "world_size": 3, "launcher": {"run_id": "r1"},
           "ranks": [_row(0, "pass"), _row(1, "fail", "all-reduce", "all_reduce is WRONG"),
                     {"rank": 2, "status": "missing", "hostname": None, "stages": [],
                      "error": {"kind": "missing", "message": "rank 2 never checked in within 5 s"}}]}
    with pytest.raises(fleet.SmokeResultFile):
        fleet.parse(json.dumps(doc).encode())
    runs = fleet.smoke_runs("job.json", doc)
    assert [(r.rank, r.world_size, r.status, r.failed_stage) for r in runs] == [
        (0, 3, "pass", None), (1, 3, "fail", "all-reduce"), (2, 3, "fail", None)]
    assert runs[2].message == "rank 2 never checked in within 5 s" and runs[1].job == "job:r1"
    sm = fleet.smoke_summary(runs)
    assert (sm["runs"], sm["passed"], sm["failed"]) == (3, 1, 2)


def test_fleet_counts_a_rank_once_given_its_job_report_and_its_rank_file(tmp_path):
    job = {"kind": "cudadoctor-smoke-job", "schema_version": 2, "status": "pass", "world_size": 2,
           "launcher": {"run_id": "r9"}, "ranks": [_row(0, "pass"), _row(1, "pass")]}
    (tmp_path / "job.json").write_text(json.dumps(job))
    for r in (0, 1):
        doc = J.rank_document(_row(r, "pass"), D.launch_info({"RANK": str(r), "WORLD_SIZE": "2", "LOCAL_RANK": "0",
                                                              "MASTER_ADDR": "m", "TORCHELASTIC_RUN_ID": "r9"}), "gloo")
        assert doc["kind"] == "cudadoctor-smoke-rank" and doc["distributed"]["rank"] == r
        (tmp_path / f"job.rank{r}.json").write_text(json.dumps(doc))
    single = json.loads((FIXTURES / "smoke" / "single-cpu-synthetic-pass.json").read_text())
    (tmp_path / "single.json").write_text(json.dumps(single))
    _, bad, runs = fleet.read_all(fleet.find_files([str(tmp_path)]))
    assert bad == [] and sorted((r.rank, r.job) for r in runs if r.rank is not None) == [(0, "job:r9"), (1, "job:r9")]
    assert len(runs) == 3  # the two ranks once, and the single-GPU run
