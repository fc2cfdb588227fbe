"""`cudadoctor smoke --distributed`: one rank of a torchrun / srun launch.

Runs real process groups on this GPU-less machine with the gloo backend (--device cpu): two ranks
under the real torchrun, a rank whose peer fails, and a rank whose peers never arrive. The NCCL
path (--device cuda) needs GPUs and is not run here.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from conftest import run_cli, torch_python
from cudadoctor.smoke.distributed import RendezvousError, _assemble, rendezvous

HOST = socket.gethostname()


# ------------------------------------------------------------------ where this rank stands

def test_rendezvous_from_torchrun():
    env = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "MASTER_ADDR": "gpu001", "MASTER_PORT": "29400"}
    assert rendezvous(env) == {"rank": 3, "world_size": 8, "local_rank": 3, "master_addr": "gpu001", "master_port": 29400}


def test_rendezvous_from_slurm():
    env = {"SLURM_PROCID": "9", "SLURM_NTASKS": "16", "SLURM_LOCALID": "1", "MASTER_ADDR": "gpu001"}
    assert rendezvous(env) == {"rank": 9, "world_size": 16, "local_rank": 1, "master_addr": "gpu001", "master_port": 29500}


def test_rendezvous_single_rank_defaults():
    assert rendezvous({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"})["master_addr"] == "127.0.0.1"


@pytest.mark.parametrize("env,needle", [
    ({}, "RANK/WORLD_SIZE (or SLURM_PROCID/SLURM_NTASKS) are not set"),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}, "MASTER_ADDR is not set"),
    ({"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "h"}, "outside 0..1"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h"}, "LOCAL_RANK (or SLURM_LOCALID) is not set"),
    ({"RANK": "x", "WORLD_SIZE": "2"}, "RANK='x' is not an integer"),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "h", "MASTER_PORT": "70000"}, "not a port"),
])
def test_rendezvous_errors(env, needle):
    with pytest.raises(RendezvousError, match=None) as e:
        rendezvous(env)
    assert needle in str(e.value)


def _clean_env(**extra):
    e = {k: v for k, v in os.environ.items()
         if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT") and not k.startswith("SLURM")}
    e.update(extra)
    return e


def test_cli_outside_a_launch_is_exit_2():
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "smoke", "--distributed", "--per-rank", "--device", "cpu"],
                       capture_output=True, text=True, env=_clean_env())
    assert r.returncode == 2
    assert r.stderr.startswith("cudadoctor: error: --distributed runs as one rank of a launch") and r.stderr.count("\n") == 1


@pytest.mark.parametrize("args,needle", [
    (["--device", "all"], "use cuda (each rank takes cuda:LOCAL_RANK) or cpu"),
    (["--device", "cpu", "--synthetic"], "do not apply"),
])
def test_cli_bad_combinations(args, needle):
    r = run_cli("smoke", "--distributed", "--per-rank", *args, env={"RANK": "0", "WORLD_SIZE": "1"})
    assert r.returncode == 2 and needle in r.stderr


def test_a_rank_killed_after_its_last_stage_keeps_its_verdicts():
    child = {"state": "running", "current": None, "plan": [["init", "cpu"], ["ddp", "cpu"]],
             "stages": [{"name": "init", "verdict": "pass"}, {"name": "ddp", "verdict": "pass"}]}
    base = {"device": "cpu", "stages": [], "distributed": {}, "status": "error", "error": None}
    r = _assemble(base, child, -15, False, "terminated (SIGTERM)", 3.0, 60, "", terminated="SIGTERM")
    assert r["status"] == "pass" and len(r["stages"]) == 2
    assert "after its last stage" in r["notes"][0]


def test_a_rank_that_dies_mid_stage():
    child = {"state": "running", "current": {"name": "bandwidth", "device": "cpu"}, "plan": [],
             "stages": [{"name": "init", "verdict": "pass"}]}
    base = {"device": "cpu", "stages": [], "distributed": {"world_size": 4}, "status": "error", "error": None}
    r = _assemble(base, child, -9, False, None, 3.0, 60, "")
    assert r["status"] == "fail" and r["error"]["kind"] == "crash" and r["error"]["stage"] == "bandwidth"
    assert [(s["name"], s["verdict"]) for s in r["stages"]] == [
        ("init", "pass"), ("bandwidth", "fail"), ("membership", "skip"), ("all-reduce", "skip"), ("ddp", "skip")]


# ------------------------------------------------------------------ real process groups (gloo)

TORCH = torch_python()
needs_torch = pytest.mark.skipif(TORCH is None, reason="no torch interpreter (set CUDADOCTOR_TEST_TORCH_PYTHON)")


@pytest.fixture
def wrapper(tmp_path):
    """`cudadoctor` as torchrun --no-python starts it: this checkout, with this interpreter."""
    w = tmp_path / "cudadoctor"
    w.write_text(f"#!/bin/sh\nexec {sys.executable} -m cudadoctor \"$@\"\n")
    w.chmod(0o755)
    return w


def torchrun(wrapper, tmp_path, nproc, *args, **env):
    cmd = [TORCH, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc), "--no-python", str(wrapper),
           "smoke", "--distributed", "--per-rank", "--device", "cpu", "--python", TORCH, "--format", "json",
           "-o", str(tmp_path / "out" / "{host}-{rank}.json"), *args]
    e = _clean_env(OMP_NUM_THREADS="1", **env)
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=600, cwd=tmp_path)


def reports(tmp_path, n):
    return [json.loads((tmp_path / "out" / f"{HOST.split('.')[0]}-{r}.json").read_text()) for r in range(n)]


def _names_host(text: str) -> bool:
    import re

    return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(HOST)}(?![A-Za-z0-9_-])", text, re.I) is not None


@needs_torch
def test_two_ranks_under_torchrun_pass(wrapper, tmp_path):
    r = torchrun(wrapper, tmp_path, 2, "--timeout", "240", CUDADOCTOR_PSEUDONYM_KEY="site-key-for-this-test")
    assert r.returncode == 0, r.stderr[-3000:]
    pseudonyms = set()
    for rank in range(2):  # redacted like every output; with a site key, one host is one pseudonym
        text = (tmp_path / "out" / f"{HOST.split('.')[0]}-{rank}.json").read_text()
        assert not _names_host(text), text[:2000]
        pseudonyms.add(json.loads(text)["distributed"]["host"])
    assert len(pseudonyms) == 1 and next(iter(pseudonyms)).startswith("host-")
    host = pseudonyms.pop()
    for rank, rep in enumerate(reports(tmp_path, 2)):
        assert rep["kind"] == "cudadoctor-smoke-distributed" and rep["status"] == "pass", rep
        assert rep["distributed"]["rank"] == rank and rep["distributed"]["world_size"] == 2
        assert rep["distributed"]["backend"] == "gloo"
        st = {s["name"]: s for s in rep["stages"]}
        assert [s["name"] for s in rep["stages"]] == ["init", "membership", "all-reduce", "bandwidth", "ddp"]
        assert all(s["verdict"] == "pass" for s in rep["stages"])
        assert st["membership"]["evidence"]["hosts"] == {host: [0, 1]}
        assert st["all-reduce"]["evidence"]["expected"] == 3.0
        bw = st["bandwidth"]["evidence"]
        assert bw["busbw_gbps"] > 0 and bw["busbw_gbps"] == pytest.approx(bw["algbw_gbps"], rel=0.01)  # 2(W-1)/W = 1
        ddp = st["ddp"]["evidence"]
        assert ddp["weights_spread_after_wrap"] == 0 and ddp["weights_spread_after_training"] == 0
        assert ddp["mean_loss_last5"] < 0.9 * ddp["mean_loss_first5"]


@needs_torch
def test_a_failing_rank_is_named_and_its_peer_says_why(wrapper, tmp_path):
    r = torchrun(wrapper, tmp_path, 2, "--timeout", "120", CUDADOCTOR_SMOKE_FAULT="all-reduce:raise@1")
    assert r.returncode != 0
    r0, r1 = reports(tmp_path, 2)
    st1 = {s["name"]: s for s in r1["stages"]}
    assert st1["all-reduce"]["verdict"] == "fail" and st1["all-reduce"]["message"] == "RuntimeError: injected fault"
    assert st1["ddp"]["message"] == "not run: stage 'all-reduce' failed on this rank"
    # rank 0 was waiting for rank 1 in the all-reduce: its collective broke (peer gone), or the
    # launcher stopped it because rank 1 had failed
    assert r0["status"] == "fail"
    assert r0["error"]["kind"] in ("stage-failed", "terminated"), r0["error"]
    if r0["error"]["kind"] == "stage-failed":
        assert r0["error"]["stage"] == "all-reduce" and "another rank failed" in r0["error"]["hint"]
    else:
        assert "another rank probably failed first" in r0["error"]["message"]


@needs_torch
def test_missing_peers_time_out_in_init_with_a_hint(tmp_path):
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "smoke", "--distributed", "--per-rank", "--device", "cpu", "--python", TORCH,
                        "--timeout", "15", "--format", "json"], capture_output=True, text=True, timeout=120,
                       env=_clean_env(RANK="0", WORLD_SIZE="2", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                                      MASTER_PORT=str(29000 + os.getpid() % 500), OMP_NUM_THREADS="1"))
    assert r.returncode == 1, r.stderr
    rep = json.loads(r.stdout)
    init = rep["stages"][0]
    assert init["name"] == "init" and init["verdict"] == "fail"
    assert "1/2 clients joined" in init["message"] or "timed out" in init["message"].lower(), init["message"]
    assert "not every one of the 2 ranks reached 127.0.0.1" in rep["error"]["hint"]
    assert [s["verdict"] for s in rep["stages"][1:]] == ["skip"] * 4


@needs_torch
def test_single_rank_from_slurm_variables(tmp_path):
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "smoke", "--distributed", "--per-rank", "--device", "cpu", "--python", TORCH,
                        "--timeout", "120"], capture_output=True, text=True, timeout=300,
                       env=_clean_env(SLURM_PROCID="0", SLURM_NTASKS="1", SLURM_LOCALID="0", OMP_NUM_THREADS="1",
                                      MASTER_PORT=str(29500 + os.getpid() % 400)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rank 0 of 1 (local rank 0)" in r.stdout and "backend gloo, master 127.0.0.1" in r.stdout
    assert "– bandwidth" in r.stdout and "one rank: no interconnect to measure" in r.stdout


@needs_torch
def test_cuda_rank_without_a_usable_gpu_says_why():
    """On this machine (no driver): the rank fails at once with the diagnosis instead of joining."""
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "smoke", "--distributed", "--per-rank", "--python", TORCH, "--format", "json"],
                       capture_output=True, text=True, timeout=300,
                       env=_clean_env(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0"))
    assert r.returncode == 1, r.stderr
    rep = json.loads(r.stdout)
    assert rep["kind"] == "cudadoctor-smoke-distributed" and rep["error"]["kind"] == "gpu-unusable"
    assert "no-nvidia-driver" in rep["stages"][0]["message"] and rep["distributed"]["rank"] == 0
