"""Honest verdicts: "PyTorch can use the GPU" only with evidence; otherwise what is unknown and, for a
paste that shows no cause, what to paste next (text, Markdown and JSON)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, REPO
from cudadoctor.cli import cli

PASTED = FIXTURES / "pasted"
HOLDOUT = REPO / "tests" / "data" / "holdout_cases"


def check(*args, input=None):
    return CliRunner().invoke(cli, ["check", *args], input=input)


def summary(*args, input=None):
    r = check(*args, "--format", "json", input=input)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)["summary"]


def test_a_paste_with_no_cause_says_so_and_what_to_paste_next():
    """A title with no error wording and no facts: not refused; the verdict says the text shows no cause,
    names what is unknown and asks for collect_env, nvidia-smi and the full error."""
    text = "Training hangs at the first epoch on my new workstation\n"
    s = summary("--from-text", "-", input=text)
    assert s["state"] == "unknown" and "the text shows no cause" in s["text"]
    assert {"torch", "driver", "GPU", "error"} <= {u["what"] for u in s["unknown"]}
    assert [n.get("run") or n.get("paste") for n in s["next"]][:2] == ["python -m torch.utils.collect_env", "nvidia-smi"]
    assert s["next"][-1]["paste"].startswith("the full error")
    out = check("--from-text", "-", input=text).output
    assert "To tell, paste:" in out and "  python -m torch.utils.collect_env" in out
    md = check("--from-text", "-", "--format", "markdown", input=text).output
    assert "- `python -m torch.utils.collect_env`:" in md


def test_what_to_paste_follows_what_is_missing():
    """nvidia-smi's banner shows the driver and the GPUs: only torch is missing, so only collect_env is asked for."""
    s = summary("--from-text", str(PASTED / "nvidia-smi-460-v100x8-banner.txt"))
    runs = [n.get("run") for n in s["next"]]
    assert "python -m torch.utils.collect_env" in runs and "nvidia-smi" not in runs
    assert "driver" not in {u["what"] for u in s["unknown"]}
    # nvidia-smi failing on Linux: the kernel's messages tell why; not under WSL (no NVIDIA module there)
    from cudadoctor.facts import Facts, new_facts
    from cudadoctor.interpret.missing import next_pastes, unknowns

    f = new_facts("text")
    f["nvml"] = {"status": "driver-not-loaded"}
    f["system"] = {"os": "Linux"}
    runs = [n.get("run") for n in next_pastes(Facts(f), unknowns(Facts(f)))]
    assert any("dmesg" in (r or "") for r in runs) and "nvidia-smi" in runs
    f["system"]["wsl"] = True
    assert not any("dmesg" in (n.get("run") or "") for n in next_pastes(Facts(f), unknowns(Facts(f))))


def test_is_available_in_prose_is_not_evidence():
    """A sentence saying is_available() is True is not torch's report: no ✓."""
    s = summary("--from-text", "-", input="torch.cuda.is_available() returns True but training is slow on my RTX 3090\n")
    assert s["state"] == "unknown", s


@pytest.mark.parametrize("name", ["h109-healthy-torch140-4x2080ti-visible-devices-cache", "e04-vllm072-a100-pynvml-old-healthy"])
def test_a_complete_healthy_report_is_yes_and_says_no_kernel_ran(name):
    s = summary("--from-collect-env", str(HOLDOUT / f"{name}.txt"))
    assert s["state"] == "yes" and "no test kernel ran" in s["text"] and s["next"] == [], s


def test_a_report_cut_before_torch_said_anything_is_not_yes(tmp_path):
    """The same healthy report cut before its GPU and driver lines: what is unknown is named."""
    lines = (HOLDOUT / "h109-healthy-torch140-4x2080ti-visible-devices-cache.txt").read_text().splitlines()
    cut = [ln for ln in lines if not ln.startswith(("GPU", "Nvidia driver"))]
    p = tmp_path / "cut.txt"
    p.write_text("\n".join(cut) + "\n")
    s = summary("--from-collect-env", str(p))
    assert s["state"] == "unknown" and "GPU" in {u["what"] for u in s["unknown"]}, s


def test_report_reads_a_paste_too(tmp_path):
    """`report --from-text` reads what `check --from-text` reads, and the report's JSON says what to paste next."""
    base = tmp_path / "r"
    r = CliRunner().invoke(cli, ["report", "--from-text", "-", "-o", str(base)], input="Training hangs at the first epoch\n")
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["facts"]["origin"] == "text" and doc["summary"]["next"][0]["run"] == "python -m torch.utils.collect_env"
    r = CliRunner().invoke(cli, ["report", "--from-text", "-", "-o", str(base)], input="\x00\x01\x02" * 40)
    assert r.exit_code == 2 and "binary data" in r.output


def test_a_probe_without_a_kernel_run_says_so(tmp_path):
    """The recorded healthy HGX: 'a test kernel ran on each'; the same facts with the kernel results removed
    (as a probe that did not run one) still say yes from torch's own answer, and that no kernel ran."""
    doc = json.loads((FIXTURES / "facts" / "hgx-8x-h100-healthy.json").read_text())
    facts = doc.get("facts", doc)
    assert "a test kernel ran on each" in summary("--facts", str(FIXTURES / "facts" / "hgx-8x-h100-healthy.json"))["text"]
    for d in facts["torch"]["devices"]:
        d.pop("kernel_ok", None)
    p = tmp_path / "f.json"
    p.write_text(json.dumps(facts))
    s = summary("--facts", str(p))
    assert s["state"] == "yes" and "no test kernel ran" in s["text"], s


def test_a_driver_that_does_not_load_names_the_module_and_how_to_tell_why():
    """https://github.com/elementary/os-patches/issues/155 (b10-21: "Can't install drivers. `nvidia-smi` cannot communicate with
    drivers." on a GeForce 940MX after a kernel upgrade): nvidia-smi is there, so the kernel module is what is missing;
    the fix asks modprobe for the reason first, then rebuilds the module for the running kernel."""
    text = (
        "Nvidia drivers not installing on a GeForce 940MX\n## What Happened\n\n"
        "Can't install drivers. `nvidia-smi` cannot communicate with drivers. I've tried `nvidia-driver-390`, "
        "`nvidia-driver-450` and `nvidia-driver-455`.\n"
    )
    r = check("--from-text", "-", "--format", "json", input=text)
    found = [f for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]
    assert [f["code"] for f in found] == ["kernel-module-missing"], found
    cmds = found[0]["fix"]["commands"]
    assert cmds[0].startswith("sudo modprobe nvidia") and any("dkms status" in c for c in cmds), cmds


def test_a_build_or_companion_error_does_not_say_torch_cannot_use_the_gpu(tmp_path):
    """nvcc refusing an architecture (https://github.com/erikwijmans/Pointnet2_PyTorch/issues/91) says nothing of
    torch's own GPU use; a flash-attn wheel built for another torch (https://github.com/Dao-AILab/flash-attention/issues/931)
    beside a healthy report leaves torch usable."""
    r = check("--from-text", "-", "--format", "json",
              input="nvcc fatal   : Unsupported gpu architecture 'compute_75'\n"
                    "error: command '/usr/local/cuda-8.0/bin/nvcc' failed with exit status 1\n")
    assert r.exit_code == 1
    s = json.loads(r.stdout)["summary"]
    assert s["state"] == "unknown" and "toolkit-arch-unsupported" in s["text"] and "is not shown" in s["text"], s
    err = tmp_path / "e.txt"
    err.write_text("flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    r = check("--from-collect-env", str(HOLDOUT / "h109-healthy-torch140-4x2080ti-visible-devices-cache.txt"),
              "--error-file", str(err), "--format", "json")
    s = json.loads(r.stdout)["summary"]
    assert r.exit_code == 1 and s["state"] == "degraded" and s["text"].startswith("PyTorch can use the GPUs, but 1 error"), s
