"""Issue 21's text classes 2, 3, 5, 6 (kernel/installer/module lines, build logs, container/platform, packaging).

Their signatures live in their own files, cudadoctor/kb/errors/<class>.json; their real wordings, each quoted from
the public thread in its `source`, in tests/data/error_corpus/<class>.jsonl. Every wording must give its code
through both doors a support engineer uses: `check --facts F --error-file E` (facts known to be empty) and
`check --from-text E` (the verbatim paste). Every signature of those files must be proved by at least two
corpus lines from two different threads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List

import pytest
from click.testing import CliRunner

from cudadoctor.cli import cli
from cudadoctor.errortext import triage
from cudadoctor.errortext.normalize import normalize
from cudadoctor.errortext.signatures import kb_documents, kb_signatures, parse
from cudadoctor.facts import new_facts
from cudadoctor import registry

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "error_corpus"
#: class file name (kb/errors/<name>.json and tests/data/error_corpus/<name>.jsonl)
CLASSES = ("kernel-installer", "build-logs", "container-platform", "packaging", "missing-libraries")
REG = registry.load(plugins=False)


def rows(name: str) -> List[dict]:
    out = []
    for n, line in enumerate((CORPUS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            d = json.loads(line)
            d["_where"] = f"{name}.jsonl:{n}"
            out.append(d)
    return out


ALL = [d for name in CLASSES for d in rows(name)]


def class_doc(name: str) -> dict:
    return dict(kb_documents())[f"{name}.json"]


def flat(text: str) -> str:
    return " ".join(re.sub(r"\s+", " ", line.strip()) for line in normalize(text).split("\n"))


def findings(r) -> Dict[str, str]:
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    return {f["code"]: f["severity"] for f in doc["findings"] if f["severity"] in ("error", "warning")}


@pytest.fixture(scope="module")
def empty_facts(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("facts") / "empty.json"
    p.write_text(json.dumps(new_facts()), encoding="utf-8")
    return p


# --- the data ------------------------------------------------------------------------------------


def test_every_class_file_is_loaded_with_the_others():
    names = [n for n, _ in kb_documents()]
    assert names == sorted(names) and "error_signatures.json" in names
    for name in CLASSES:
        sigs = parse(class_doc(name))
        assert sigs, name
        assert set(sigs) <= set(kb_signatures()), name


@pytest.mark.parametrize("name", CLASSES)
def test_each_signature_has_sources_and_two_real_wordings_from_two_threads(name):
    for s in parse(class_doc(name)):
        assert len(s.sources) >= 2 and all(u.startswith("https://github.com/") for u in s.sources), s.regex
        rx = re.compile(s.regex, re.IGNORECASE)
        proved = {d["source"] for d in ALL if d["code"] == s.code and rx.search(flat(d["text"]))}
        assert len(proved) >= 2, f"{name}: {s.code} {s.regex[:60]!r} is proved by {sorted(proved)}"
        assert proved <= set(s.sources), f"{name}: corpus sources {sorted(proved - set(s.sources))} missing from the signature"


# --- each real wording through both doors ---------------------------------------------------------


@pytest.mark.parametrize("d", ALL, ids=[d["_where"] for d in ALL])
def test_triage_names_the_code_first(d):
    res = triage(d["text"], REG)
    assert res["candidates"] and res["candidates"][0]["code"] == d["code"], (d["_where"], res["candidates"][:2])


@pytest.mark.parametrize("d", ALL, ids=[d["_where"] for d in ALL])
def test_check_error_file_and_from_text_report_the_code(d, tmp_path, empty_facts):
    err = tmp_path / "error.txt"
    err.write_text(d["text"], encoding="utf-8")
    runner = CliRunner()
    got = findings(runner.invoke(cli, ["check", "--facts", str(empty_facts), "--error-file", str(err), "--format", "json"]))
    assert d["code"] in got, (d["_where"], got)
    got = findings(runner.invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))
    assert d["code"] in got, (d["_where"], got)


# --- what these signatures must not claim ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # a user checking for nvcc in an interactive shell says nothing about a build
        "$ nvcc --version\nbash: nvcc: command not found",
        # DKMS failing for another module is not the nvidia module
        "Error! Bad return status for module build on kernel: 5.10.0-kali6-amd64 (x86_64)\n"
        "Consult /var/lib/dkms/rtl8192eu/1.0/build/make.log for more information.",
        # the CUDA wheel for Windows, from the CUDA index
        "Downloading https://download.pytorch.org/whl/cu121/torch-2.1.2%2Bcu121-cp311-cp311-win_amd64.whl (2473.9 MB)",
    ],
)
def test_near_misses_name_no_class_code(text):
    codes = {c["code"] for c in triage(text, REG)["candidates"]}
    assert not codes & {"cuda-home-not-set", "kernel-module-missing", "cpu-only-torch"}, codes


def test_no_cuda_runtime_line_is_contradicted_by_a_cuda_torch(tmp_path):
    """The build line only says torch.cuda.is_available() was False; with a CUDA build installed it is not cpu-only-torch."""
    facts = new_facts()
    facts["torch"] = {"installed": True, "importable": True, "version": "2.1.0+cu121", "cuda": "12.1"}
    fpath = tmp_path / "f.json"
    fpath.write_text(json.dumps(facts), encoding="utf-8")
    err = tmp_path / "e.txt"
    err.write_text("No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--facts", str(fpath), "--error-file", str(err), "--format", "json"])
    assert findings(r).get("cpu-only-torch") is None, r.stdout


# --- class 7: the root, not the mechanism ------------------------------------------------------------

# CUDA's error 803 as torch words it: tests/data/error_corpus/cuda-runtime.jsonl line 16
# (https://github.com/easydiffusion/easydiffusion/issues/134).
E803 = (
    "Error: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
    "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / "
    "cuda driver combination"
)


def _check_facts(tmp_path, facts, text) -> Dict[str, str]:
    fpath, err = tmp_path / "f.json", tmp_path / "e.txt"
    fpath.write_text(json.dumps(facts), encoding="utf-8")
    err.write_text(text, encoding="utf-8")
    return findings(CliRunner().invoke(cli, ["check", "--facts", str(fpath), "--error-file", str(err), "--format", "json"]))


def _gpu_facts(ld_library_path: str) -> dict:
    facts = new_facts()
    facts["environment"] = {"vars": {"LD_LIBRARY_PATH": ld_library_path}}
    facts["torch"] = {"installed": True, "importable": True, "version": "2.3.0+cu121", "cuda": "12.1", "cuda_available": False}
    facts["nvml"] = {"status": "ok", "driver_version": "535.104.05", "devices": [{"name": "NVIDIA GeForce RTX 3090", "index": 0}]}
    return facts


def test_error_803_with_compat_libraries_on_the_path_is_the_compat_code_not_a_driver_mismatch(tmp_path):
    got = _check_facts(tmp_path, _gpu_facts("/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64"), E803)
    assert "cuda-compat-driver-mismatch" in got and "nvml-driver-mismatch" not in got, got
    # without compat libraries the same text keeps its meaning
    got = _check_facts(tmp_path, _gpu_facts("/usr/local/nvidia/lib64"), E803)
    assert "nvml-driver-mismatch" in got and "cuda-compat-driver-mismatch" not in got, got


@pytest.mark.parametrize(
    "text,major",
    [
        # https://github.com/yeyupiaoling/Whisper-Finetune/issues/16 and https://github.com/jianchang512/stt/issues/76:
        # cuDNN 8 not installed for the CUDA runtime that dlopens it; installing the nvidia-cudnn wheel fixed it
        (
            "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object "
            "file: No such file or directory\nPlease make sure libcudnn_ops_infer.so.8 is in your library path!\nAborted",
            "8",
        ),
        (
            "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object "
            "file: No such file or directory\n已放弃 (核心已转储)",
            "8",
        ),
    ],
)
def test_a_missing_cudnn_names_the_wheel_a_skipped_dependency_would_have_installed(tmp_path, text, major):
    err = tmp_path / "e.txt"
    err.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    # A missing cuDNN file is cuda-library-missing first (cudnn-mismatch only with another cuDNN major shown, round 6)
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "cuda-library-missing"]
    assert any(f"nvidia-cudnn-cu12=={major}.*" in c for c in f["fix"]["commands"]), f["fix"]


def test_a_library_cudnn_needs_is_not_taken_for_cudnn_itself(tmp_path):
    """https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/10230: cuDNN loads, libnvrtc.so is what is missing."""
    err = tmp_path / "e.txt"
    err.write_text(
        "Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such file or directory",
        encoding="utf-8",
    )
    r = CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"])
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "cudnn-mismatch"]
    assert not any("nvidia-cudnn" in c for c in f["fix"]["commands"]), f["fix"]


# --- class 5: a scheduler hides the GPUs ------------------------------------------------------------


def _no_gpu_finding(tmp_path, env: Dict[str, str], nvml_count: int) -> dict:
    facts = new_facts()
    facts["environment"] = {"vars": env}
    facts["torch"] = {
        "installed": True,
        "importable": True,
        "version": "2.3.0+cu121",
        "cuda": "12.1",
        "cuda_available": False,
        "device_count": 0,
    }
    facts["nvml"] = {
        "status": "ok",
        "driver_version": "535.104.05",
        "device_count": nvml_count,
        "devices": [{"index": i, "name": "NVIDIA A100-SXM4-80GB"} for i in range(nvml_count)],
    }
    fpath = tmp_path / "f.json"
    fpath.write_text(json.dumps(facts), encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--facts", str(fpath), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "no-gpu-visible"]
    return f


def test_a_slurm_job_without_a_gpu_request_is_told_to_request_one(tmp_path):
    """https://github.com/3dem/model-angelo/issues/60: "my slurm-submission script ... didn't actually get a gpu allocated"."""
    f = _no_gpu_finding(tmp_path, {"SLURM_JOB_ID": "4242"}, nvml_count=0)
    assert "Slurm job (4242) was allocated no GPU" in f["title"]
    assert any("--gres=gpu" in c for c in f["fix"]["commands"])
    # with GPUs allocated to the job, it is not the request
    f = _no_gpu_finding(tmp_path, {"SLURM_JOB_ID": "4242", "SLURM_JOB_GPUS": "0"}, nvml_count=0)
    assert "Slurm" not in f["title"]


def test_an_empty_cuda_visible_devices_names_the_scheduler_request(tmp_path):
    """Ray sets CUDA_VISIBLE_DEVICES='' for a task or actor with num_gpus=0 (https://github.com/vllm-project/vllm/pull/3198)."""
    f = _no_gpu_finding(tmp_path, {"CUDA_VISIBLE_DEVICES": ""}, nvml_count=2)
    cmds = f["fix"]["commands"]
    assert cmds[0] == "unset CUDA_VISIBLE_DEVICES" and any("num_gpus=1" in c for c in cmds)
    assert not any("--gres" in c for c in cmds)  # not a Slurm job
    f = _no_gpu_finding(tmp_path, {"CUDA_VISIBLE_DEVICES": "", "SLURM_JOB_ID": "7"}, nvml_count=2)
    assert any("--gres=gpu" in c for c in f["fix"]["commands"])


# --- the findings read their numbers from the real wordings ----------------------------------------


def _from_text(tmp_path, text: str, code: str) -> dict:
    err = tmp_path / "e.txt"
    err.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["code"] == code]
    return f


@pytest.mark.parametrize(
    "source,gpu,branch",
    [
        ("https://github.com/siderolabs/talos/issues/8764", "GeForce GT 710", "470"),
        ("https://github.com/NixOS/nixos-hardware/issues/1828", "GeForce GTX 1050", "580"),
        ("https://github.com/fgci-org/ansible-role-cuda/issues/16", "Tesla M2070", "390"),
    ],
)
def test_the_legacy_branch_and_the_gpu_come_from_the_kernel_log(tmp_path, source, gpu, branch):
    (d,) = [d for d in ALL if d["source"] == source]
    f = _from_text(tmp_path, d["text"], "gpu-needs-legacy-driver")
    assert f"ignores the {gpu}: it needs the {branch}.xx legacy driver" in f["title"], f["title"]
    assert f["fix"]["commands"][0].startswith(f"sudo apt-get install nvidia-driver-{branch} ")


@pytest.mark.parametrize(
    "source,gcc",
    [
        ("https://github.com/qwopqwop200/GPTQ-for-LLaMa/issues/33", "11"),
        ("https://github.com/mit-han-lab/torchsparse/issues/189", "10"),
        ("https://github.com/Hanqer/deep-hough-transform/issues/43", "8"),
        ("https://github.com/abetlen/llama-cpp-python/issues/1643", "13"),
    ],
)
def test_the_highest_gcc_cuda_accepts_is_read_from_the_message(tmp_path, source, gcc):
    (d,) = [d for d in ALL if d["source"] == source]
    f = _from_text(tmp_path, d["text"], "host-compiler-unsupported")
    assert f"supports gcc {gcc} at most" in f["title"] and f["fix"]["commands"][0] == f"sudo apt-get install gcc-{gcc} g++-{gcc}"


@pytest.mark.parametrize(
    "source,wheel",
    [
        ("https://github.com/m-bain/whisperX/issues/788", "nvidia-cublas-cu12"),
        ("https://github.com/SYSTRAN/faster-whisper/issues/535", "nvidia-cublas-cu11"),
        ("https://github.com/stepfun-ai/Step-Audio-EditX/issues/3", "nvidia-cublas-cu11"),
        ("https://github.com/SYSTRAN/faster-whisper/issues/575", "nvidia-cublas-cu12"),
    ],
)
def test_a_missing_cuda_library_names_the_wheel_of_its_cuda_major(tmp_path, source, wheel):
    (d,) = [d for d in ALL if d["source"] == source]
    f = _from_text(tmp_path, d["text"], "cuda-library-missing")
    assert f["fix"]["commands"][0].startswith(f"python -m pip install {wheel} "), f["fix"]
    assert "nvidia.cublas as m" in f["fix"]["commands"][1]


def test_rminitadapter_is_the_consequence_when_the_kernel_log_names_the_root(tmp_path):
    """tests/data/error_corpus/driver.jsonl line 10: the log says the GPU requires the open kernel modules, then RmInitAdapter fails."""
    d = json.loads((CORPUS / "driver.jsonl").read_text(encoding="utf-8").splitlines()[9])
    assert "RmInitAdapter failed" in d["text"] and d["code"] == "open-kernel-module-required"
    err = tmp_path / "e.txt"
    err.write_text(d["text"], encoding="utf-8")
    got = findings(CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))
    assert "open-kernel-module-required" in got and "gpu-init-failed" not in got, got
    assert triage(d["text"], REG)["candidates"][0]["code"] == "open-kernel-module-required"


def test_winerror_1455_is_the_paging_file_not_a_missing_dll(tmp_path):
    """The DLL exists; Windows refused to map it (tests/data/error_corpus/container-platform.jsonl, four threads)."""
    for d in [d for d in ALL if d["code"] == "windows-pagefile-too-small"]:
        err = tmp_path / "e.txt"
        err.write_text(d["text"], encoding="utf-8")
        got = findings(CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))
        assert "windows-pagefile-too-small" in got and "dll-load-failure" not in got, (d["_where"], got)


def test_nvcc_on_windows_is_told_to_use_the_x64_msvc(tmp_path):
    for d in [d for d in ALL if "targets unsupported OS" in d["text"]]:
        f = _from_text(tmp_path, d["text"], "host-compiler-unsupported")
        assert "64-bit MSVC" in f["title"] and not any("apt-get" in c for c in f["fix"]["commands"]), f


@pytest.mark.parametrize(
    "source,who,want",
    [
        ("https://github.com/conda-forge/jax-feedstock/issues/149", "JAX", "9.1"),
        ("https://github.com/MIT-REALM/gcbfplus/issues/1", "JAX", "8.9"),
        ("https://github.com/jax-ml/jax/issues/15268", "JAX/XLA", "8.6"),
    ],
)
def test_xla_cudnn_checks_name_the_framework_and_the_cudnn_it_needs(tmp_path, source, who, want):
    (d,) = [d for d in ALL if d["source"] == source]
    f = _from_text(tmp_path, d["text"], "cudnn-mismatch")
    assert f"older than the one {who} was built against" in f["title"] and "torch" not in f["title"], f["title"]
    assert f'"nvidia-cudnn-cu12>={want}"' in f["fix"]["commands"][0], f["fix"]
