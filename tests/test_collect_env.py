"""Reading `python -m torch.utils.collect_env` output: real pastes from public issues -> facts.

The fixtures are real reports (sources in tests/fixtures/collect_env/README.md); every assertion
is about what that text says, and that what it does not say stays unknown.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from cudadoctor.cli import cli
from cudadoctor.readers.collect_env import MAX_TEXT_CHARS, parse_collect_env
from cudadoctor.facts import Facts, FactsError

CE = FIXTURES / "collect_env"
CASES = Path(__file__).resolve().parents[2] / "shared" / "cases"


def parse(name: str) -> dict:
    with open(CE / name, encoding="utf-8", newline="") as f:  # keep CRLF as pasted
        return parse_collect_env(f.read())


def names(facts: dict) -> list:
    return [d["name"] for d in facts["nvml"].get("devices", [])]


def dist(facts: dict, name: str, listed_by: str = None) -> list:
    return [d for d in facts["packages"].get("distributions", [])
            if d["name"].lower().replace("_", "-") == name and (listed_by is None or d["listed_by"] == listed_by)]


# --- real fixtures, field by field ---------------------------------------------------------


def test_torch11_flat_yes_no():
    f = parse("points3d-66-torch110-yesno.txt")
    assert f["origin"] == "collect_env" and f["kind"] == "cudadoctor-facts" and f["schema_version"] == 1
    assert f["collect_env"]["layout"] == "torch-1.x-yesno"
    assert f["collect_env"]["truncated"] is False
    t = f["torch"]
    assert (t["version"], t["status"], t["cuda"], t["debug"], t["cuda_available"]) == ("1.1.0", "ok", "9.0.176", False, True)
    assert "hip" not in t  # torch 1.1 printed no ROCm line: unknown, not None
    assert f["nvml"] == {"driver_version": "418.67", "devices": [{"index": 0, "name": "GeForce RTX 2060"}],
                         "device_count": 1, "status": "ok"}
    assert f["toolkit"] == {"nvcc_version": "9.1", "nvcc_version_full": "9.1.85"}  # cuDNN: Could not collect
    assert f["system"] == {"os": "Linux", "distro": "Ubuntu 18.04.2 LTS"}  # no "(x86_64)" before torch 1.7
    assert f["python"] == {"version": "3.6", "platform": "linux"}  # no "(64-bit runtime)" yet: bits unknown
    assert [d["name"] for d in f["packages"]["distributions"]] == [
        "numpy", "numpy-indexed", "torch", "torch-cluster", "torch-geometric", "torch-sparse", "torchfile", "torchnet", "torchvision"]
    assert dist(f, "torchvision")[0] == {"name": "torchvision", "version": "0.2.0", "installer": "pip", "listed_by": "pip"}
    assert f["packages"]["listings"] == {"pip": "listed", "conda": "not-collected"}
    assert "environment" in f and "vars" not in f["environment"]  # torch's collect_env lists no variables
    assert "My computer" in f["user_error"]["text"]  # the fence label is the user's text, not a field


def test_torch13_indented_could_not_collect_is_a_cpu_build():
    f = parse("pytorch-44303-torch131-indented-cpubuild.txt")
    assert f["collect_env"]["layout"] == "torch-1.x-yesno"
    t = f["torch"]
    assert t["version"] == "1.3.1" and t["status"] == "ok"
    assert "cuda" in t and t["cuda"] is None  # imported, torch.version.cuda None -> "Could not collect"
    assert Facts(f).str("torch.cuda") is None and t["cuda_available"] is False and t["debug"] is False
    assert names(f) == ["GeForce RTX 2080 Ti"] and f["nvml"]["driver_version"] == "430.64"
    assert f["toolkit"]["nvcc_version_full"] == "10.1.105"  # nvcc on PATH, not torch's CUDA
    assert f["toolkit"]["system_cudnn"] == [
        {"path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.7.6.5", "version": "7.6.5"},
        {"path": "/usr/local/cuda-10.1/targets/x86_64-linux/lib/libcudnn.so.7.6.5", "version": "7.6.5"}]
    assert [(d["name"], d["version"]) for d in f["packages"]["distributions"]] == [
        ("numpy", "1.19.1"), ("torch", "1.3.1"), ("torchvision", "0.4.2")]
    # collect_env always prints a [conda] line last; this paste stops before it.
    assert f["packages"]["complete"] is False and "conda" not in f["packages"]["listings"]
    assert "print(torch.cuda.is_available())" in f["user_error"]["text"]


def test_torch16_two_gpus_and_conda_pip_rows():
    f = parse("pytorch-43058-torch160-two-v100.txt")
    assert names(f) == ["Tesla V100-PCIE-16GB", "Tesla V100-PCIE-16GB"]
    assert [d["index"] for d in f["nvml"]["devices"]] == [0, 1] and f["nvml"]["device_count"] == 2
    assert f["torch"]["cuda"] == "10.2" and f["torch"]["cuda_available"] is False
    # "[conda] torch 1.6.0 <pip>" is the pip install conda also lists: one distribution, not two
    assert [(d["name"], d["installer"], d["listed_by"]) for d in dist(f, "torch")] == [("torch", "pip", "pip")]
    assert f["packages"]["listings"] == {"pip": "listed", "conda": "listed"}
    # "(Maipo)" is a release name, not an architecture
    assert f["system"] == {"os": "Linux", "distro": "Red Hat Enterprise Linux Server 7.6 (Maipo)"}
    assert "toolkit" in f and "nvcc_version" not in f["toolkit"]  # CUDA runtime: Could not collect
    assert "NVIDIA-SMI 418.67" in f["user_error"]["text"]


def test_torch131_cuda_version_as_printed_and_eight_gpus_cut():
    f = parse("pytorch-30071-torch131-eight-titanxp-cut.txt")
    assert f["torch"]["cuda"] == "10.1.243"  # torch 1.3 reported torch.version.cuda with the patch level
    assert names(f) == ["TITAN Xp"] * 8 and f["nvml"]["device_count"] == 8
    assert f["nvml"]["driver_version"] == "410.48"
    assert f["toolkit"]["nvcc_version"] == "10.0"
    assert [d["name"] for d in f["packages"]["distributions"]] == ["numpy"]  # "[pip3] to" is cut: not a package
    assert f["packages"]["complete"] is False and f["collect_env"]["truncated"] is True


def test_quoted_windows_report_and_prose_before_it():
    f = parse("pytorch-40682-quoted-windows-cut.txt")
    assert f["collect_env"]["layout"] == "torch-1.x-yesno"
    assert f["torch"]["version"] == "1.5.0+cu101" and f["torch"]["cuda_available"] is True
    assert f["system"] == {"os": "Windows", "distro": "Microsoft Windows Server 2019 Standard"}
    assert f["python"]["platform"] == "win32"
    assert names(f) == ["TITAN RTX", "TITAN RTX"] and f["nvml"]["driver_version"] == "442.92"
    assert f["toolkit"]["system_cudnn"] == [
        {"path": r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v10.1\bin\cudnn64_7.dll", "version": "7"}]
    assert dist(f, "torch")[0]["listed_by"] == "pip"  # "[pip] torch==..." (pip, not pip3)
    conda = [d for d in f["packages"]["distributions"] if d["listed_by"] == "conda"]
    assert [(d["name"], d["version"], d.get("build")) for d in conda][:2] == [("blas", "1.0", "mkl"), ("mkl", "2019.4", "245")]
    assert len(conda) == 5  # "[cond" at the cut is not a package


def test_truncated_torch17_report_keeps_only_what_it_says():
    f = parse("pytorch-74733-torch170-truncated.txt")
    assert f["collect_env"]["layout"] == "torch-1.x" and f["collect_env"]["truncated"] is True
    t = f["torch"]
    assert (t["version"], t["cuda"], t["debug"], t["cuda_available"], t["hip"]) == ("1.7.0+cu110", "11.0", True, False, None)
    assert f["system"] == {"os": "Linux", "distro": "CentOS Linux 7 (Core)", "arch": "x86_64", "kernel": "4.14.0_1-0-0-38",
                           "libc": "glibc 2.2.5", "wsl": False}
    assert f["python"] == {"version": "3.6.4", "bits": 64, "version_full": "3.6.4 (default, Mar 17 2022, 20:24:30)  [GCC 8.2.0]",
                           "platform": "linux"}
    # Everything after the cut is unknown: no driver, GPUs, toolkit, packages
    assert f["nvml"] == {} and f["toolkit"] == {} and f["packages"] == {}
    assert "Found no NVIDIA driver on your system" in Facts(f).user_error()


def test_windows_torch20_with_wmic_cpu_block():
    f = parse("pytorch-51858-torch201-windows.txt")
    assert f["collect_env"]["layout"] == "torch-2.x"
    assert f["system"] == {"os": "Windows", "distro": "Microsoft Windows 11 Pro", "windows_release": "10",
                           "windows_version": "10.0.22621"}
    assert f["python"]["version"] == "3.9.16" and f["python"]["bits"] == 64 and f["python"]["platform"] == "win32"
    t = f["torch"]
    assert (t["version"], t["cuda"], t["cuda_available"], t["cuda_module_loading"], t["hip"]) == \
           ("2.0.1+cu117", "11.7", True, "LAZY", None)
    assert names(f) == ["NVIDIA GeForce GTX 1050 Ti"] and f["nvml"]["driver_version"] == "535.98"
    assert f["toolkit"]["nvcc_version_full"] == "11.7.64"
    assert f["toolkit"]["system_cudnn"][0]["version"] == "8"
    # "Architecture=9", "Revision=" are CPU facts, never environment variables
    assert "vars" not in f["environment"]
    assert "Name=Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz" in f["collect_env"]["cpu_lines"]
    assert "arch" not in f["system"]  # 9 is a WMI code, not a machine name
    assert [d["name"] for d in f["packages"]["distributions"]] == ["numpy", "torch", "torchaudio", "torchvision", "blas"]


def test_cpu_build_none_and_no_cuda_on_macos():
    f = parse("pytorch-121067-torch222-macos-cpu-none.txt")
    t = f["torch"]
    assert t["version"] == "2.2.2" and "cuda" in t and t["cuda"] is None and t["cuda_available"] is False
    assert f["nvml"]["status"] == "no-nvidia-smi" and "driver_version" not in f["nvml"] and "devices" not in f["nvml"]
    assert f["toolkit"] == {}  # "No CUDA" is not a toolkit version
    assert f["system"] == {"os": "Darwin", "distro": "macOS 14.5", "arch": "x86_64"}
    # sys.version wrapped over two lines by the mail client is joined again
    assert f["python"]["bits"] == 64 and f["python"]["platform"] == "darwin"
    assert f["python"]["version_full"].endswith("[Clang 15.0.0 (clang-1500.1.0.2.5)]")
    assert dist(f, "torch")[0]["version"] == "2.2.2" and f["packages"]["complete"] is True
    assert f["collect_env"]["cpu_lines"] == ["Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz"]


def test_nightly_cpu_build_could_not_collect_cut():
    f = parse("pytorch-108607-nightly-cpu-could-not-collect-cut.txt")
    t = f["torch"]
    assert t["version"] == "2.1.0.dev20230905" and t["cuda"] is None and t["cuda_available"] is False
    assert "cuda_module_loading" not in t  # the text stops at an empty value
    assert f["toolkit"] == {"nvcc_version": "11.8", "nvcc_version_full": "11.8.89"}
    assert f["python"]["version"] == "3.9.18"
    assert f["nvml"] == {} and f["packages"] == {}


def test_modern_eight_gpus_with_cpu_info_cut():
    f = parse("vllm-10303-torch240-eight-3090-cut.txt")
    assert f["collect_env"]["layout"] == "torch-2.x"
    assert names(f) == ["NVIDIA GeForce RTX 3090"] * 8
    assert f["nvml"]["driver_version"] == "535.183.01" and f["toolkit"]["nvcc_version"] == "12.6"
    assert f["torch"]["cuda"] == "12.1" and f["torch"]["cuda_available"] is True and f["torch"]["xnnpack_available"] is True
    assert f["system"]["kernel"] == "5.11.0-40-generic" and f["system"]["libc"] == "glibc 2.31"
    assert f["collect_env"]["cpu_lines"][0] == "Architecture:                    x86_64"
    assert f["packages"] == {}  # never reached the library list
    assert "Failed to import from vllm._C" in f["user_error"]["text"]


def test_details_fence_crlf_cpu_build():
    raw = (CE / "vllm-15953-torch260-cpu-details-crlf.txt").read_bytes()
    assert b"\r\n" in raw and not raw.endswith(b"\n")  # the fixture is what a Windows clipboard gives
    f = parse("vllm-15953-torch260-cpu-details-crlf.txt")
    assert f["torch"]["version"] == "2.6.0+cpu" and f["torch"]["cuda"] is None
    assert f["nvml"]["status"] == "no-nvidia-smi"
    assert f["system"] == {"os": "Linux", "distro": "Arch Linux", "arch": "x86_64", "kernel": "6.13.8-arch1-1",
                           "libc": "glibc 2.41", "wsl": False}
    assert f["python"]["version"] == "3.12.9"
    assert all("\r" not in v for v in f["collect_env"]["fields"].values())
    # the German lscpu lines stay CPU evidence; "Architektur:" is not a field
    assert "Architektur:                          x86_64" in f["collect_env"]["cpu_lines"]
    assert "<summary>" not in f["user_error"]["text"] and "Automatically detected platform cpu" in f["user_error"]["text"]


def test_rocm_build_gpu_name_is_not_nvidia_smi():
    f = parse("vllm-9713-rocm-flat-cut.txt")
    t = f["torch"]
    assert (t["version"], t["cuda"], t["hip"], t["hip_runtime_version"], t["miopen_runtime_version"]) == \
           ("2.5.1+rocm6.2", None, "6.2.41133-dd7f95766", "6.2.41133", "3.2.0")
    assert t["devices"] == [{"index": 0, "name": "AMD Radeon Graphics (gfx906:sramecc+:xnack-)"}]
    assert f["nvml"] == {}  # no NVIDIA facts at all


def test_vllm_sections_cpu_torch_on_a_gpu_machine():
    f = parse("vllm-24063-sections-cpu-torch-with-gpu-truncated.txt")
    assert f["collect_env"]["layout"] == "vllm-sections" and f["collect_env"]["truncated"] is True
    t = f["torch"]
    assert t["version"] == "2.6.0+cpu" and t["cuda"] is None and t["cuda_available"] is False and t["hip"] is None
    assert names(f) == ["NVIDIA GeForce RTX 3090"] and f["nvml"]["driver_version"] == "570.124.06"
    assert f["system"]["distro"] == "Ubuntu 22.04.5 LTS" and f["system"]["libc"] == "glibc 2.35"
    assert f["python"]["version"] == "3.12.11"
    assert "system_cudnn" not in f["toolkit"]  # "cuDNN version :" with the value cut off
    assert "vars" not in f["environment"]  # never reached the Environment Variables section
    assert f["collect_env"]["fields"]["PyTorch version"] == "2.6.0+cpu"


def test_vllm_sections_cut_mid_word_drops_the_cut_line():
    f = parse("genesis-vllm-patches-24-sections-8x3090-cut.txt")
    assert names(f) == ["NVIDIA GeForce RTX 3090"] * 3  # not "NVIDIA GeForc"
    assert f["collect_env"]["last_line_ignored"] == "GPU 3: NVIDIA GeForc"
    assert f["torch"]["version"] == "2.11.0+cu130" and f["torch"]["cuda"] == "13.0"
    assert "cuda_module_loading" not in f["torch"]  # printed empty: not a value
    assert f["toolkit"]["nvcc_version_full"] == "13.1.115"


def test_vllm_sections_complete_with_environment_variables():
    f = parse("vllm-48453-sections-rocm-envvars.txt")
    assert f["collect_env"]["layout"] == "vllm-sections" and f["collect_env"]["truncated"] is False
    assert f["environment"]["vars"] == {
        "LD_LIBRARY_PATH": "/opt/rocm/lib:/usr/local/lib:", "MAX_JOBS": "", "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
        "PYTORCH_ROCM_ARCH": "gfx90a;gfx942;gfx950;gfx1100;gfx1101;gfx1200;gfx1201;gfx1150;gfx1151",
        "TORCHINDUCTOR_CACHE_DIR": "/tmp/torchinductor_root", "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    assert f["environment"]["ld_library_path"] == ["/opt/rocm/lib", "/usr/local/lib"]
    fx = Facts(f)
    assert fx.env_recorded() and fx.env("CUDA_VISIBLE_DEVICES") is None
    assert f["torch"]["hip"] == "7.2.53211" and f["torch"]["cuda"] is None and f["torch"]["cuda_available"] is True
    assert dist(f, "torch")[0]["version"] == "2.11.0+gitd0c8b1f" and len(f["packages"]["distributions"]) == 15
    # vLLM's own version line (not in the pip list) is a package too: it ships CUDA kernels of its own
    assert dist(f, "vllm")[0]["version"].startswith("0.23.1rc1.dev998") and dist(f, "vllm")[0]["listed_by"] == "collect_env"
    assert f["packages"]["complete"] is True
    assert f["collect_env"]["fields"]["vLLM Version"].startswith("0.23.1rc1.dev998")
    assert len(f["collect_env"]["cpu_lines"]) == 38 and f["system"]["arch"] == "x86_64"
    # the rocm-smi topology ("GPU[0] : (Topology) ...") is neither a GPU list nor variables
    assert f["nvml"] == {}


# --- semantics, on small real excerpts -----------------------------------------------------

# pytorch/pytorch#121067 (2.2.2, macOS), the block collect_env prints when torch sees no CUDA.
NO_CUDA = """PyTorch version: 2.2.2
Is debug build: False
CUDA used to build PyTorch: None
Is CUDA available: False
CUDA runtime version: No CUDA
GPU models and configuration: No CUDA
Nvidia driver version: No CUDA
cuDNN version: No CUDA
"""

# shared/cases/500: torch could not be imported; pip still lists it.
NOT_IMPORTED = """PyTorch version: N/A
Is debug build: N/A
CUDA used to build PyTorch: N/A
ROCM used to build PyTorch: N/A
Is CUDA available: N/A

Versions of relevant libraries:
{pip}
[conda] Could not collect
"""


def test_no_cuda_means_no_nvidia_smi():
    f = parse_collect_env(NO_CUDA)
    assert f["nvml"]["status"] == "no-nvidia-smi" and "No CUDA" in f["nvml"]["error"]
    assert f["torch"]["cuda"] is None and f["toolkit"] == {}


def test_pytorch_na_with_torch_listed_is_an_import_failure():
    f = parse_collect_env(NOT_IMPORTED.format(pip="[pip3] torch==2.4.0+cu121"))
    assert f["torch"] == {"status": "import-failed", "importable": False,
                          "error": {"type": "Unknown", "message": "collect_env could not import torch", "how": "raised"}}
    g = parse_collect_env(NOT_IMPORTED.format(pip="[pip3] No relevant packages"))
    # collect_env runs pip in the same interpreter: N/A with a pip list that has no torch is no torch at all
    # (pytorch/pytorch#114893: Python 3.12 before its wheels, `pip install torch` had found nothing)
    assert g["torch"] == {"status": "not-installed", "importable": False}
    assert g["packages"]["distributions"] == [] and g["packages"]["listings"]["pip"] == "none"


def test_could_not_collect_without_a_torch_version_stays_unknown():
    f = parse_collect_env("PyTorch version: Could not collect\nCUDA used to build PyTorch: Could not collect\n"
                          "Is CUDA available: Could not collect\n")
    assert "cuda" not in f["torch"] and "version" not in f["torch"] and "cuda_available" not in f["torch"]


@pytest.mark.parametrize("value,expect", [
    ("90100", [{"version": "9.1.0"}]), ("7605", [{"version": "7.6.5"}]), ("8.9.2", [{"version": "8.9.2"}]),
    ("/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2", [{"path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2", "version": "8.9.2"}]),
    ("/usr/local/cuda/lib/libcudnn.7.dylib", [{"path": "/usr/local/cuda/lib/libcudnn.7.dylib", "version": "7"}]),
    ("Could not collect", None), ("No CUDA", None),
])
def test_cudnn_values(value, expect):
    f = parse_collect_env(f"PyTorch version: 2.1.0\nIs CUDA available: True\ncuDNN version: {value}\n")
    assert f["toolkit"].get("system_cudnn") == expect


def test_gpu_lines_keep_uuid_and_full_width_colons():
    # pytorch/pytorch#37320 typed "GPU 0： Tesla P100-PCIE-16GB" with full-width colons
    f = parse_collect_env("PyTorch version: 1.5.0\nIs CUDA available: No\nGPU models and configuration:\n"
                          "GPU 0： Tesla P100-PCIE-16GB\nGPU 1: Tesla P100-PCIE-16GB (UUID: GPU-1c0a2b3d-0000-1111-2222-333344445555)\n\n"
                          "Nvidia driver version: 410.104\n")
    assert f["nvml"]["devices"] == [{"index": 0, "name": "Tesla P100-PCIE-16GB"},
                                    {"index": 1, "name": "Tesla P100-PCIE-16GB", "uuid": "GPU-1c0a2b3d-0000-1111-2222-333344445555"}]


def test_vllm_environment_never_keeps_secret_names():
    text = ("==============================\n     Environment Variables\n==============================\n"
            "HF_TOKEN=hf_abcdefghijklmnop\nVLLM_API_KEY=sk-123\nAWS_SECRET_ACCESS_KEY=x\nCUDA_VISIBLE_DEVICES=0,1\n"
            "PIP_INDEX_URL=https://user:hunter2@pypi.example/simple\n"
            "PyTorch version              : 2.6.0\nIs CUDA available            : True\n")
    f = parse_collect_env(text)
    assert f["environment"]["vars"] == {"CUDA_VISIBLE_DEVICES": "0,1", "PIP_INDEX_URL": "https://***@pypi.example/simple"}
    dumped = json.dumps(f)
    for secret in ("hf_abcdefghijklmnop", "HF_TOKEN", "VLLM_API_KEY", "sk-123", "AWS_SECRET", "hunter2"):
        assert secret not in dumped
    assert f["collect_env"]["secret_env_vars_dropped"] == 3


def test_messy_transport_ansi_utf16_quotes():
    base = (CE / "points3d-66-torch110-yesno.txt").read_text(encoding="utf-8")
    want = parse_collect_env(base)
    ansi = base.replace("PyTorch version:", "\x1b[1;32mPyTorch version:\x1b[0m")
    quoted = "\n".join("> " + line for line in base.splitlines())
    utf16 = base.encode("utf-16").decode("utf-8", "replace")  # PowerShell `>` file read as UTF-8
    for text in (ansi, quoted, utf16, base.encode("utf-16")):
        got = parse_collect_env(text)
        for section in ("torch", "nvml", "toolkit", "python"):
            assert got[section] == want[section], section


def test_second_report_and_prose_versions_are_not_mixed_in():
    first = (CE / "points3d-66-torch110-yesno.txt").read_text(encoding="utf-8")
    second = (CE / "pytorch-43058-torch160-two-v100.txt").read_text(encoding="utf-8")
    f = parse_collect_env("I tried PyTorch version: 1.0 first.\n" + first + "\nand after upgrading:\n" + second)
    assert f["torch"]["version"] == "1.1.0" and names(f) == ["GeForce RTX 2060"]
    assert f["collect_env"]["second_report_ignored"] is True


def test_vllm_flat_layout_variables_follow_the_topology():
    # vLLM's flat template (quoted in vllm-project/vllm#18188): "GPU Topology:\n{gpu_topo}\n\n{env_vars}";
    # topology legend lines ("X    = Self") are not variables.
    text = ("PyTorch version: 2.5.1+cu124\nIs CUDA available: True\nNvidia driver version: 550.54.15\n"
            "Versions of relevant libraries:\n[pip3] torch==2.5.1\n[conda] Could not collect\n"
            "ROCM Version: Could not collect\nNeuron SDK Version: N/A\nvLLM Version: 0.6.4.post1\n"
            "vLLM Build Flags:\nCUDA Archs: Not Set; ROCm: Disabled; Neuron: Disabled\nGPU Topology:\n"
            "GPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-31\t0\t\tN/A\n\nLegend:\n\n"
            "  X    = Self\n  SYS  = Connection traversing PCIe\n\n"
            "NCCL_CUMEM_ENABLE=0\nTORCHINDUCTOR_COMPILE_THREADS=1\nCUDA_MODULE_LOADING=LAZY\n")
    f = parse_collect_env(text)
    assert f["collect_env"]["layout"] == "vllm-flat"
    assert f["environment"]["vars"] == {"CUDA_MODULE_LOADING": "LAZY", "NCCL_CUMEM_ENABLE": "0", "TORCHINDUCTOR_COMPILE_THREADS": "1"}


@pytest.mark.parametrize("text", ["", "   \n\n", "hello world", "Traceback (most recent call last):\nOSError: x",
                                  "OS: Linux\n", '{"kind": "cudadoctor-facts"}'])
def test_not_collect_env_is_a_one_line_error(text):
    with pytest.raises(FactsError) as e:
        parse_collect_env(text)
    assert "\n" not in str(e.value) and str(e.value).startswith("collect_env:")


def test_size_limit():
    with pytest.raises(FactsError, match="larger than 2 MiB"):
        parse_collect_env("PyTorch version: 2.0.0\n" * (MAX_TEXT_CHARS // 20))


# --- the shared real cases -----------------------------------------------------------------

def _cases():
    if not CASES.is_dir():
        return []
    return sorted(p for p in CASES.glob("*.txt") if not p.name.endswith(".error.txt"))


@pytest.mark.skipif(not CASES.is_dir(), reason=f"shared cases not found at {CASES}")
@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.stem)
def test_shared_case_facts(path):
    case = json.loads(path.with_suffix(".json").read_text())
    want = case["facts"]
    f = parse_collect_env(path.read_text(encoding="utf-8"))
    fx = Facts(f)
    text = path.read_text(encoding="utf-8")
    assert f["collect_env"]["layout"].startswith({"torch-1.x": "torch-1.x", "torch-2.x": "torch-2.x",
                                                  "vllm-sections": "vllm-sections"}[case["layout"]])
    importable = want.get("torch_importable", True)
    if importable:
        assert fx.str("torch.version") == want["torch"]
        # torch.version.cuda: printed, or None in a CPU build (key present), or unknown (key absent)
        assert fx.str("torch.cuda") == want["torch_cuda"]
        if want.get("torch_cuda_is_none"):
            assert "cuda" in f["torch"] and f["torch"]["cuda"] is None
    else:
        # "PyTorch version: N/A": the version the thread names is in the package list, if at all;
        # torch's CUDA (which the case records from the thread) is not in the text: unknown.
        assert "version" not in f["torch"] and "cuda" not in f["torch"]
        listed = [d["version"] for d in f["packages"]["distributions"] if d["name"] == "torch"]
        assert listed == ([want["torch"]] if want["torch"] else [])
        pip_printed = f["packages"].get("listings", {}).get("pip") in ("listed", "none")
        assert f["torch"].get("status") == ("import-failed" if listed else "not-installed" if pip_printed else None)
    assert fx.bool("torch.cuda_available") == want["is_cuda_available"]
    if "is_debug_build" in want:
        assert f["torch"]["debug"] is want["is_debug_build"]
    assert names(f) == want["gpus"]
    assert fx.str("nvml.driver_version") == want["driver"]
    assert (fx.str("toolkit.nvcc_version_full") or fx.str("toolkit.nvcc_version")) == want["cuda_runtime"]
    cudnn = fx.dicts("toolkit.system_cudnn")
    assert (cudnn[0].get("path") or cudnn[0].get("version") if cudnn else None) == want["cudnn"]
    # collect_env before torch 1.8 printed only major.minor of Python
    py, want_py = fx.str("python.version"), want["python"]
    assert py == want_py or (want_py and py and want_py.startswith(py + ".") and re.search(r"Python version: \d+\.\d+\n", text))
    if "python_bits" in want:
        assert f["python"]["bits"] == want["python_bits"]
    if "python_platform" in want:
        assert f["system"]["kernel"] in want["python_platform"]
    os_ = want["os"]
    if os_ is None:
        assert "distro" not in f["system"]
    elif os_ == "Windows":
        assert f["system"]["os"] == "Windows"
    else:
        s = f["system"]
        assert (f"{s['distro']} ({s['arch']})" if "arch" in s else s["distro"]) == os_
    for name, version in want["packages"].items():
        assert [d["version"] for d in f["packages"]["distributions"] if d["name"] == name and d["listed_by"] == "pip"] == [version]
    for name, version in want["conda_packages"].items():
        assert [d["version"] for d in f["packages"]["distributions"]
                if d["listed_by"] == "conda" and d.get("package", d["name"]) == name] == [version]
    if case["layout"] == "vllm-sections":
        assert f["environment"]["vars"] == want["env"]
    else:
        assert "vars" not in f["environment"]  # torch's layout does not list variables: unknown


# --- the CLI ---------------------------------------------------------------------------------


def invoke(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_cli_check_from_collect_env_json():
    r = invoke("check", "--from-collect-env", str(CE / "pytorch-121067-torch222-macos-cpu-none.txt"), "--format", "json")
    assert r.exit_code in (0, 1), r.output
    report = json.loads(r.output)
    assert report["facts"]["origin"] == "collect_env" and report["facts"]["torch"]["version"] == "2.2.2"


def test_cli_stdin_and_error_text_both_kept(tmp_path):
    err = tmp_path / "err.txt"
    err.write_text("RuntimeError: Found no NVIDIA driver on your system.\n")
    text = (CE / "pytorch-74733-torch170-truncated.txt").read_text(encoding="utf-8")
    r = invoke("check", "--from-collect-env", "-", "--error-file", str(err), "--format", "json", input=text)
    ue = json.loads(r.output)["facts"]["user_error"]["text"]
    assert ue.startswith("RuntimeError: Found no NVIDIA driver") and "UserWarning: CUDA initialization" in ue


def test_cli_collect_prints_facts():
    r = invoke("collect", "--from-collect-env", str(CE / "vllm-48453-sections-rocm-envvars.txt"))
    assert r.exit_code == 0
    facts = json.loads(r.output)
    assert facts["kind"] == "cudadoctor-facts" and facts["torch"]["hip"] == "7.2.53211"


@pytest.mark.parametrize("args,message", [
    (["check", "--from-collect-env", "{ce}", "--facts", "{ce}"], "--from-collect-env and --facts cannot be used together"),
    (["check", "--from-collect-env", "{ce}", "--python", "/usr/bin/python3"], "cannot be used together"),
    (["check", "--from-collect-env", "{missing}"], "no such file"),
    (["check", "--from-collect-env", "{notenv}"], "not the output of python -m torch.utils.collect_env"),
    (["collect", "--from-collect-env", "{notenv}"], "not the output of python -m torch.utils.collect_env"),
])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, args, message):
    notenv = tmp_path / "notes.txt"
    notenv.write_text("my GPU does not work, please help\n")
    subs = {"ce": str(CE / "points3d-66-torch110-yesno.txt"), "missing": str(tmp_path / "nope.txt"), "notenv": str(notenv)}
    r = CliRunner().invoke(cli, [a.format(**subs) for a in args])
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("cudadoctor: error:") and message in lines[0], r.output


# --- property: nothing but FactsError, whatever the text -----------------------------------

FIXTURE_TEXTS = [p.read_text(encoding="utf-8") for p in sorted(CE.glob("*.txt"))]


@st.composite
def mutated_fixture(draw):
    text = draw(st.sampled_from(FIXTURE_TEXTS))
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["cut", "insert", "delete", "dup", "swap"]))
        n = len(text)
        i = draw(st.integers(0, n))
        if op == "cut":
            text = text[:i]
        elif op == "insert":
            text = text[:i] + draw(st.text(max_size=40)) + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(0, 200)):]
        else:
            lines = text.split("\n")
            j, k = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if op == "dup":
                lines.insert(j, lines[k])
            else:
                lines[j], lines[k] = lines[k], lines[j]
            text = "\n".join(lines)
    return text


@settings(derandomize=True, max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=500), mutated_fixture()))
def test_never_raises_anything_but_facts_error(text):
    try:
        f = parse_collect_env(text)
    except FactsError as e:
        assert "\n" not in str(e)
        return
    json.dumps(f)  # always serialisable
    assert f["origin"] == "collect_env" and isinstance(f["collect_env"]["fields"], dict)


@pytest.mark.parametrize("build", [
    lambda n: "GPU models and configuration:\nGPU 0:" + " " * n + "x",
    lambda n: "PyTorch version: 2.0\nIs CUDA available: True\n" + "a\n" * (n // 2),
    lambda n: "PyTorch version: 2.0\nIs CUDA available: True\n" + "> " * (n // 2),
    lambda n: "PyTorch version: 2.0\nIs CUDA available: True\n==============================\n Environment Variables\n"
              "==============================\n" + "A=" * (n // 2),
])
def test_adversarial_input_near_the_size_limit_is_fast(build):
    import time

    text = build(MAX_TEXT_CHARS - 200)
    t0 = time.perf_counter()
    try:
        parse_collect_env(text)
    except FactsError:
        pass
    assert time.perf_counter() - t0 < 5


def test_lone_surrogates_do_not_reach_the_output():
    f = parse_collect_env("PyTorch version: 2.0.0\nIs CUDA available: True\nOS: Ubuntu \udcff (x86_64)\nsome \udcfe text\n")
    json.dumps(f).encode("utf-8")
    f["user_error"]["text"].encode("utf-8")


def test_cli_explicit_error_survives_long_surrounding_text(tmp_path):
    err = tmp_path / "err.txt"
    err.write_text("CUDA error: no kernel image is available for execution on the device\n")
    text = ("noise line\n" * 3000) + (CE / "points3d-66-torch110-yesno.txt").read_text(encoding="utf-8")
    r = invoke("check", "--from-collect-env", "-", "--error-file", str(err), "--format", "json", input=text)
    ue = json.loads(r.output)["facts"]["user_error"]["text"]
    assert ue.startswith("CUDA error: no kernel image") and len(ue) <= 20000


def test_this_machines_real_collect_env_matches_the_live_probes():
    """The same machine, read two ways: torch's collect_env text and cudadoctor's own probes."""
    from cudadoctor.readers.collect_env import parse_collect_env
    from conftest import load_fixture

    text = (Path(__file__).parent / "fixtures" / "collect_env" / "thismachine-torch2141-cu130-nodriver.txt").read_text()
    parsed = parse_collect_env(text)
    live = load_fixture("live-torch2141-cu130-nodriver.json")
    for key in ("version", "cuda", "cuda_available"):
        assert parsed["torch"][key] == live["torch"][key], key
    assert parsed["python"]["version"] == live["python"]["version"]
    assert parsed["toolkit"]["nvcc_version"] == live["toolkit"]["nvcc_version"]
    assert "driver_version" not in parsed["nvml"] or parsed["nvml"]["driver_version"] is None


# --- "Could not collect" for the build: a CPU build only where torch's own answer says so ------------

_HOLDOUT = Path(__file__).parent / "data" / "holdout_cases"
_E08 = (_HOLDOUT / "e08-win-conda-torch222-cpu-rtx4080.txt").read_text(encoding="utf-8")  # a real CPU build's report


def _cli_findings(*args):
    r = CliRunner().invoke(cli, ["check", *args, "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return {f["code"]: f["severity"] for f in json.loads(r.stdout)["findings"]}


def test_could_not_collect_beside_torchs_false_is_a_cpu_build():
    t = parse_collect_env(_E08)["torch"]
    assert "Is CUDA available: False" in _E08 and t["cuda"] is None


def test_could_not_collect_everywhere_leaves_the_build_unknown(tmp_path):
    """A rendering where every unknown reads "Could not collect" (an imported torch always answers True or
    False to is_available): the build is unknown, and an sm_120 error is not blamed on a CPU build."""
    text = _E08.replace("Is CUDA available: False", "Is CUDA available: Could not collect")
    assert "cuda" not in parse_collect_env(text)["torch"]
    p, e = tmp_path / "ce.txt", tmp_path / "err.txt"
    p.write_text(text)
    e.write_text(
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
    )
    assert "cpu-only-torch" not in _cli_findings("--from-collect-env", str(p), "--error-file", str(e))
    # torch's own True: a CUDA build whatever the build line says
    assert "cuda" not in parse_collect_env(_E08.replace("Is CUDA available: False", "Is CUDA available: True"))["torch"]


def test_the_package_lists_name_the_build():
    """pip's +cuXXX / +cpu tag or conda's build string of the listed torch at the imported version."""
    text = _E08.replace("Is CUDA available: False", "Is CUDA available: Could not collect")
    lines = [ln for ln in text.splitlines() if not re.match(r"\[(?:pip3?|conda)\]\s+(?:torch|pytorch)\s", ln)]
    ver = parse_collect_env(text)["torch"]["version"]
    for extra, want in (
        (f"[pip3] torch=={ver}+cu118", "11.8"),
        (f"[pip3] torch=={ver}+cpu", None),
        (f"[conda] pytorch                   {ver}         py3.9_cuda11.8_cudnn8.7.0_0    pytorch", "11.8"),
        (f"[conda] pytorch                   {ver}             cpu_py39h0d6a2c9_0    conda-forge", None),
    ):
        got = parse_collect_env("\n".join(lines + [extra]) + "\n")["torch"]
        assert "cuda" in got and got["cuda"] == want, (extra, got)
    # a listed torch of another version says nothing about the imported one
    assert "cuda" not in parse_collect_env("\n".join(lines + ["[pip3] torch==1.0.0+cpu"]) + "\n")["torch"]


def test_cpu_only_does_not_stand_on_could_not_collect_when_cuda_ran(tmp_path):
    """torch answered False, but the error is one only CUDA code gives: not a CPU build's finding."""
    p, e = tmp_path / "ce.txt", tmp_path / "err.txt"
    p.write_text(_E08)
    e.write_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert "cpu-only-torch" not in _cli_findings("--from-collect-env", str(p), "--error-file", str(e))
    assert _cli_findings("--from-collect-env", str(p)).get("cpu-only-torch") == "error"
