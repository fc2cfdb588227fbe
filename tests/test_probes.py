"""Probes against fake trees and fake programs: what they read, and how they fail."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import run_cli
from cudadoctor.probes import system, timeouts_from_env


def make_tree(root: Path, files: dict) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    return root


def test_gpu_without_driver_seen_on_the_pci_bus(tmp_path):
    """An RTX 4090 on the bus, nouveau bound to it, no nvidia module: as sysfs and /proc show it."""
    root = make_tree(tmp_path, {
        "sys/bus/pci/devices/0000:01:00.0/vendor": "0x10de\n",
        "sys/bus/pci/devices/0000:01:00.0/device": "0x2684\n",
        "sys/bus/pci/devices/0000:01:00.0/class": "0x030000\n",
        "sys/bus/pci/devices/0000:01:00.1/vendor": "0x10de\n",  # the card's HDMI audio function
        "sys/bus/pci/devices/0000:01:00.1/class": "0x040300\n",
        "sys/bus/pci/devices/0000:00:02.0/vendor": "0x8086\n",
        "sys/bus/pci/devices/0000:00:02.0/class": "0x030000\n",
        "proc/modules": "nouveau 2781184 3 - Live 0x0000000000000000\nsnd_hda_intel 61440 0 - Live 0x0\n",
        "etc/os-release": 'NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n',
    })
    drv = tmp_path / "sys/bus/nouveau"
    drv.mkdir(parents=True)
    os.symlink(drv, tmp_path / "sys/bus/pci/devices/0000:01:00.0/driver")
    facts = system.probe_system(str(root))
    assert facts["pci_nvidia_devices"] == [{"address": "0000:01:00.0", "device_id": "0x2684", "class": "0x030000", "driver": "nouveau"}]
    assert facts["kernel_modules"]["nouveau"] is True and facts["kernel_modules"]["nvidia"] is False
    assert facts["distro"] == "Ubuntu 24.04.1 LTS"


def test_kernel_module_version_container_and_wsl(tmp_path):
    root = make_tree(tmp_path, {
        "proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX x86_64 Kernel Module  520.56.06  Thu Oct  6 21:38:55 UTC 2022\n"
                                       "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n",
        "run/.containerenv": "",
        "proc/sys/kernel/osrelease": "5.15.153.1-microsoft-standard-WSL2\n",
        "proc/modules": "nvidia_uvm 1 0 - Live 0x0\nnvidia 1 0 - Live 0x0\n",
    })
    facts = system.probe_system(str(root))
    assert facts["nvidia_kernel_driver"] == "520.56.06"
    assert facts["container"] == "podman" and facts["wsl"] is True
    assert facts["kernel_modules"]["nvidia"] is True


def test_unreadable_files_are_unknown_not_errors(tmp_path):
    # A directory where a file should be fails to read like an unreadable /proc file does.
    (tmp_path / "proc" / "modules").mkdir(parents=True)
    (tmp_path / "etc" / "os-release").mkdir(parents=True)
    facts = system.probe_system(str(tmp_path))
    assert facts["kernel_modules"] is None and facts["distro"] is None
    assert facts["pci_nvidia_devices"] is None  # no readable PCI bus: unknown, not "no GPU"


def test_environment_never_reads_secret_names_and_scrubs_urls():
    env = {"HF_TOKEN": "hf_abc", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "NCCL_IB_AUTH_KEY": "k", "CUDA_VISIBLE_DEVICES": "0,1",
           "PYTORCH_INDEX": "https://alice:hunter2@pypi.example.com/simple", "PATH": "/usr/local/cuda-12.4/bin:/usr/bin", "HOME": "/home/alice"}
    facts = system.probe_environment(env)
    assert set(facts["vars"]) == {"CUDA_VISIBLE_DEVICES", "PYTORCH_INDEX"}
    assert facts["vars"]["PYTORCH_INDEX"] == "https://***@pypi.example.com/simple"
    assert facts["path_cuda_dirs"] == ["/usr/local/cuda-12.4/bin"]


def test_toolkit_reads_nvcc_version_from_a_fake_nvcc(tmp_path):
    nvcc = tmp_path / "bin" / "nvcc"
    nvcc.parent.mkdir()
    nvcc.write_text("#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n")
    nvcc.chmod(0o755)
    facts = system.probe_toolkit({"PATH": str(nvcc.parent), "CUDA_HOME": str(tmp_path)}, timeout=10)
    assert (facts["nvcc"], facts["nvcc_version"], facts["nvcc_version_full"]) == (str(nvcc), "12.4", "12.4.131")


def test_toolkit_nvcc_that_fails(tmp_path):
    nvcc = tmp_path / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'error while loading shared libraries: libcudart.so' >&2\nexit 127\n")
    nvcc.chmod(0o755)
    facts = system.probe_toolkit({"PATH": str(tmp_path)}, timeout=10)
    assert "exited with code 127" in facts["nvcc_error"] and "libcudart" in facts["nvcc_error"]


def test_timeouts_knob():
    assert timeouts_from_env("torch=30, nvml=5,bogus=3,toolkit=x,pyenv=0.1") == {"torch": 30.0, "nvml": 5.0}


def test_duplicate_distributions_are_a_fact(tmp_path):
    for d in ("a", "b"):
        info = tmp_path / d / f"nvidia_cudoc_test-1.{d}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: nvidia-cudoc-test\nVersion: 1.26.{ord(d) - 97}\n")
    r = run_cli("collect", "--quick", env={"PYTHONPATH": f"{tmp_path / 'a'}:{tmp_path / 'b'}"})
    dups = [d for d in json.loads(r.stdout)["packages"]["duplicates"] if d["name"] != "cudadoctor"]  # a checkout's own
    assert dups == [{"name": "nvidia-cudoc-test", "versions": ["1.26.0", "1.26.1"], "locations": [str(tmp_path / "a"), str(tmp_path / "b")]}]


PYENV_PROBE = Path(__file__).resolve().parent.parent / "cudadoctor" / "probes" / "child" / "pyenv_probe.py"


def _pyenv(python: str, tmp_path: Path, env: dict | None = None) -> dict:
    import subprocess

    out = tmp_path / "pyenv.json"
    subprocess.run([python, str(PYENV_PROBE), str(out)], check=True, timeout=120, env=env)
    return json.loads(out.read_text())


def test_pyenv_probe_reads_packages_as_importlib_metadata_does(tmp_path):
    """The probe reads METADATA headers itself (no email package) and skips what the directory name
    says is irrelevant; on a real environment (torch, its nvidia-* wheels) it must agree with
    importlib.metadata on every package it reports, and miss none."""
    import subprocess

    from conftest import torch_python

    python = torch_python() or os.sys.executable
    got = _pyenv(python, tmp_path)["distributions"]
    code = r"""
import json, re, sys
from importlib import metadata
sys.path.insert(0, sys.argv[1])
from pyenv_probe import RELEVANT, norm
out = []
for d in metadata.distributions():
    name = d.metadata["Name"]
    if name and RELEVANT.match(norm(name)):
        out.append({"name": name, "version": d.version, "location": str(d.locate_file("")),
                    "requires": [r for r in (d.requires or []) if RELEVANT.match(norm(re.split(r"[ ;<>=!~\[(]", r)[0]))][:40]})
print(json.dumps(out))
"""
    r = subprocess.run([python, "-c", code, str(PYENV_PROBE.parent)], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)  # -c puts the working directory on sys.path; a script run does not
    want = json.loads(r.stdout)
    assert len(want) >= 2
    assert [{k: d[k] for k in ("name", "version", "location", "requires")} for d in got] == want


def test_pyenv_probe_headers_eggs_and_odd_names(tmp_path):
    site = tmp_path / "site"
    files = {
        # folded header, a description body with header-like lines, an upper-case directory name
        "TorchVision-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: torchvision\nVersion: 0.1\n"
                                               "Requires-Dist: torch ==2.5.0\nSummary: a\n  folded summary\n\n"
                                               "Name: not-a-header\nRequires-Dist: numpy\n",
        # an egg: PKG-INFO and requires.txt
        "numpy-1.26.4-py3.11.egg-info/PKG-INFO": "Metadata-Version: 1.1\nName: numpy\nVersion: 1.26.4\n",
        "numpy-1.26.4-py3.11.egg-info/requires.txt": "torch>=2\nsix\n",
        # the directory says relevant, the metadata says otherwise: the metadata wins
        "torch-9.dist-info/METADATA": "Metadata-Version: 2.1\nName: not-torch\nVersion: 9\n",
        # unrelated, never parsed: broken METADATA must not matter
        "requests-2.0.dist-info/METADATA": "\x00\xff garbage",
    }
    make_tree(site, files)
    env = dict(os.environ, PYTHONPATH=str(site))
    dists = {d["name"]: d for d in _pyenv(os.sys.executable, tmp_path, env)["distributions"] if d["location"] == str(site)}
    assert sorted(dists) == ["numpy", "torchvision"]
    assert dists["torchvision"]["version"] == "0.1" and dists["torchvision"]["requires"] == ["torch ==2.5.0"]
    assert dists["numpy"]["version"] == "1.26.4" and dists["numpy"]["requires"] == ["torch>=2"]


# -- while torch imports, the other child processes take turns, at a lower priority -------------

def _run_jobs(jobs: dict) -> None:
    """Run jobs in threads as collect() does, and wait for all."""
    import threading

    import time

    threads = [threading.Thread(target=fn) for fn in jobs.values()]
    for th in threads:  # in order: the first gets the first turn
        th.start()
        time.sleep(0.02)
    for th in threads:
        th.join()


def _sleeper(spans: dict, name: str, s: float):
    """A probe that takes ``s`` seconds and records when it really ran (not when it was started)."""
    import time

    def fn():
        t0 = time.monotonic()
        time.sleep(s)
        spans[name] = (t0, time.monotonic())
        return "ok", {}, ""

    return fn


def _overlap(a, b) -> bool:
    return a[0] < b[1] - 0.02 and b[0] < a[1] - 0.02


OTHERS = ("pyenv", "nvml", "toolkit")


def test_probes_take_turns_while_torch_imports():
    from cudadoctor.probes import _Turns

    turns, spans = _Turns(), {}
    jobs = {"torch": turns.opening_after(_sleeper(spans, "torch", 1.5))}
    jobs.update({n: turns.taking_turns(_sleeper(spans, n, 0.2)) for n in OTHERS})
    _run_jobs(jobs)
    assert not any(_overlap(spans[a], spans[b]) for a in OTHERS for b in OTHERS if a < b), spans
    assert max(spans[n][1] for n in OTHERS) < spans["torch"][1]


def test_probes_run_at_once_when_torch_is_done_early():
    from cudadoctor.probes import _Turns

    turns, spans = _Turns(), {}
    jobs = {"torch": turns.opening_after(_sleeper(spans, "torch", 0.05))}
    jobs.update({n: turns.taking_turns(_sleeper(spans, n, 0.5)) for n in OTHERS})
    _run_jobs(jobs)
    assert all(_overlap(spans[a], spans[b]) for a in OTHERS for b in OTHERS if a < b), spans


def test_a_hanging_probe_holds_the_others_up_by_turn_wait_s_at_most(monkeypatch):
    import time

    import cudadoctor.probes as probes

    monkeypatch.setattr(probes, "TURN_WAIT_S", 0.3)
    turns, spans = probes._Turns(), {}
    jobs = {"nvml": turns.taking_turns(_sleeper(spans, "nvml", 2.0))}  # first in line, and hangs
    jobs.update({n: turns.taking_turns(_sleeper(spans, n, 0.1)) for n in ("pyenv", "toolkit")})
    jobs["torch"] = turns.opening_after(_sleeper(spans, "torch", 3.0))
    t0 = time.monotonic()
    _run_jobs(jobs)
    assert spans["nvml"][0] - t0 < 0.1
    assert all(0.25 < spans[n][0] - t0 < 0.9 for n in ("pyenv", "toolkit")), (t0, spans)


def _nice_seen_by_nvcc(tmp_path: Path, *args: str) -> int:
    nvcc = tmp_path / "bin" / "nvcc"
    nvcc.parent.mkdir(exist_ok=True)
    seen = tmp_path / "nice.txt"
    # sleep first: the priority is set just after the process starts
    nvcc.write_text(f"#!/bin/sh\nsleep 0.3\nnice > {seen}\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n")
    nvcc.chmod(0o755)
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True, exist_ok=True)
    (site / "torch" / "__init__.py").write_text("import time\ntime.sleep(1.5)\n__version__ = '2.99.0+cpu'\n")
    env = {"PATH": f"{nvcc.parent}:{os.environ['PATH']}", "PYTHONPATH": str(site), "CUDA_HOME": ""}
    r = run_cli("check", *args, "--format", "json", env=env, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    return int(seen.read_text())


def test_child_probes_run_at_lower_priority_only_while_torch_imports(tmp_path):
    from cudadoctor.probes import NICE

    base = os.nice(0)
    assert _nice_seen_by_nvcc(tmp_path) == min(19, base + NICE)
    assert _nice_seen_by_nvcc(tmp_path, "--quick") == base
