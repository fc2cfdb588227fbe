"""The check catalogue on real inputs: recorded machines, the shared real cases, real error texts.

Recorded facts come from this project's machine (tests/fixtures/facts); variations change only the
fields a scenario is about. Error texts are quoted from the public issue threads named next to them.
"""

from __future__ import annotations

import copy
from pathlib import Path
import json

import pytest
from click.testing import CliRunner

from casefacts import CASES, case_ids, facts_from_case, load_case
from conftest import load_fixture, run_cli
from cudadoctor import registry
from cudadoctor.cli import cli
from cudadoctor.errortext import code_matches, of_code
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

CATALOGUE = ("driver-too-old", "gpu-arch-unsupported", "cudnn-mismatch", "library-shadowing", "torchvision-mismatch",
             "python-unsupported", "dll-load-failure", "nvml-driver-mismatch", "numpy-abi-mismatch",
             "cuda-toolkit-mismatch", "multiple-torch-installs", "wsl-driver-in-guest", "stub-libcuda",
             "cuda-forward-compat", "fabric-manager-missing")

_REG = registry.load(plugins=False)


def report(facts):
    return diagnose(facts, _REG)


def found(facts, severity=("error", "warning")):
    return [f.code for f in report(facts).findings if f.severity in severity]


def the(facts, code):
    hits = [f for f in report(facts).findings if f.code == code]
    assert hits, f"no {code} in {[(f.severity, f.code) for f in report(facts).findings]}"
    return hits[0]


def text_facts(text, **sections):
    doc = new_facts("collect_env")
    doc["user_error"] = {"text": text}
    for k, v in sections.items():
        doc[k].update(v)
    return doc


@pytest.fixture
def t214():
    """torch 2.14.1+cu130 (PyPI) + torchvision 0.29.1 on this machine: no GPU, no driver."""
    return load_fixture("live-torch2141-cu130-nodriver.json")


def with_driver(facts, driver="580.95.05", gpus=("NVIDIA GeForce RTX 4090",), cuda_available=None):
    f = copy.deepcopy(facts)
    f["nvml"] = {"status": "ok", "driver_version": driver, "device_count": len(gpus),
                 "devices": [{"index": i, "name": n} for i, n in enumerate(gpus)]}
    f["system"]["pci_nvidia_devices"] = [{"address": f"0000:0{i + 1}:00.0"} for i in range(len(gpus))]
    f["torch"].pop("cuda_init_error", None)
    if cuda_available is not None:
        f["torch"]["cuda_available"] = cuda_available
        f["torch"]["device_count"] = len(gpus) if cuda_available else 0
    return f


# ---------------------------------------------------------------- every code is documented

def test_every_catalogue_code_is_registered_with_docs_and_signatures():
    for code in CATALOGUE:
        c = _REG.code(code)
        assert c is not None, code
        assert all(len(c.explanation[s]) > 40 for s in c.SECTIONS), code
        assert c.links and all(u.startswith("https://") for u in c.links), code
        if code != "multiple-torch-installs":  # seen as a version discrepancy, not an error text
            assert of_code(c), code  # its wordings: signature data in cudadoctor/kb/errors/


@pytest.mark.parametrize("code", CATALOGUE)
def test_explain_works_for_every_code(code):
    r = CliRunner().invoke(cli, ["explain", code], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert code in r.output and "How to fix" in r.output


# ---------------------------------------------------------------- this machine's real environments

def test_cuda_build_without_driver_is_only_the_missing_driver(t214):
    findings = [f for f in report(t214).findings if f.severity != "info"]
    assert [f.code for f in findings] == ["no-nvidia-driver"]


def test_cpu_torch_with_cuda_torchvision_gets_the_cpu_torchvision():
    facts = load_fixture("live-torch2130-cpu-tv0280.json")
    f = the(facts, "torchvision-mismatch")
    assert f.severity == "error"
    assert "CUDA build (cu130)" in f.title and "CPU build (cpu)" in f.title
    assert f.fix.commands == ("python -m pip install --force-reinstall --no-deps torchvision==0.28.0 "
                              "--index-url https://download.pytorch.org/whl/cpu",)
    assert "libc10_cuda.so" in f.evidence["torchvision.extension_error"]
    assert "cpu-only-torch" not in found(facts)  # no NVIDIA GPU here: a CPU torch is right


def test_on_a_gpu_machine_the_cpu_torch_moves_to_cuda_with_its_pair():
    facts = with_driver(load_fixture("live-torch2130-cpu-tv0280.json"), "550.54.14")
    want = "python -m pip install torch==2.13.0 torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cu126"
    assert want in the(facts, "cpu-only-torch").fix.commands  # driver 550 runs cu12x: the newest 2.13.0 variant is cu126
    assert the(facts, "torchvision-mismatch").fix.commands == (want.replace("install torch", "install --force-reinstall torch"),)


def test_ld_preload_cudart_maps_two_copies_and_names_both():
    facts = load_fixture("live-torch2141-cu130-ldpreload-cudart.json")
    libs = facts["torch"]["loaded_libraries"]["libraries"]
    cudarts = sorted({d["realpath"] for d in libs if d["name"] == "libcudart.so.13"})
    assert len(cudarts) == 2  # recorded: the process really mapped two copies
    f = the(facts, "library-shadowing")
    assert f.severity == "warning"  # torch imported and ran; the second copy happens to work
    for p in cudarts:
        assert p in f.title
    assert f.evidence["libcudart.so.13 loaded via"] == "LD_PRELOAD=/usr/local/cuda/lib64/libcudart.so.13"
    assert f.fix.commands[0] == "unset LD_PRELOAD"


# ---------------------------------------------------------------- the shared real cases

@pytest.mark.skipif(not CASES.is_dir(), reason="../shared/cases not present beside the repository")
@pytest.mark.parametrize("case_id", case_ids())
def test_real_case_label_is_found(case_id):
    case = load_case(case_id)
    rep = report(facts_from_case(case_id))
    if case["label"] == "healthy":
        assert not [f.code for f in rep.findings if f.severity == "error"], case_id
    else:
        assert case["label"] in [f.code for f in rep.findings if f.severity in ("error", "warning")], \
            (case_id, [(f.severity, f.code) for f in rep.findings])


def _label_found(label, findings):
    if label == "healthy":
        return not [f for f in findings if f["severity"] == "error"]
    return label in [f["code"] for f in findings if f["severity"] in ("error", "warning")]


@pytest.mark.skipif(not CASES.is_dir(), reason="../shared/cases not present beside the repository")
@pytest.mark.parametrize("case_id", case_ids())
def test_measure_cli_from_collect_env_text(case_id):
    """The measure, end to end: the real CLI on the case's collect_env text and error file."""
    args = ["check", "--from-collect-env", str(CASES / f"{case_id}.txt"), "--format", "json"]
    if (CASES / f"{case_id}.error.txt").exists():
        args += ["--error-file", str(CASES / f"{case_id}.error.txt")]
    r = run_cli(*args, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    findings = json.loads(r.stdout)["findings"]
    assert _label_found(load_case(case_id)["label"], findings), (case_id, [(f["severity"], f["code"]) for f in findings])


# ---------------------------------------------------------------- error texts users reported

REAL_ERRORS = [
    # (code, text, extra facts, source)
    ("driver-too-old", "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
     "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx", {},
     "https://github.com/lllyasviel/Fooocus/issues/1313"),
    ("gpu-arch-unsupported", "NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch "
     "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.", {},
     "https://github.com/Nerogar/OneTrainer/issues/755"),
    ("gpu-arch-unsupported", "Found GPU0 NVIDIA GTX TITAN Black which is of cuda capability 3.5. PyTorch no longer supports this GPU "
     "because it is too old. The minimum cuda capability supported by this library is 3.7.", {},
     "https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/3003"),
    ("cudnn-mismatch", "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime "
     "version (8, 3, 3). PyTorch already comes bundled with cuDNN.", {}, "https://github.com/RaleLee/Co-GAT/issues/2"),
    ("library-shadowing", "ImportError: /home/dp/anaconda3/envs/ComfyUI/lib/python3.11/site-packages/torch/lib/../../nvidia/cusparse/"
     "lib/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12", {},
     "https://github.com/pytorch/pytorch/issues/131312"),
    ("torchvision-mismatch", "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
     "PyTorch has CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your "
     "PyTorch install.", {}, "https://github.com/deforum/deforum-stable-diffusion/issues/348"),
    ("python-unsupported", "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
     "ERROR: No matching distribution found for torch", {}, "https://github.com/milksense/venus/issues/8"),
    ("dll-load-failure", 'OSError: [WinError 126] Le module spécifié est introuvable. Error loading "C:\\ai\\stable-diffusion-webui\\venv'
     '\\lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.', {"system": {"os": "Microsoft Windows 10"}},
     "https://github.com/huggingface/diffusers/issues/5247"),
    ("dll-load-failure", 'OSError: [WinError 126] 找不到指定的模块。 Error loading "E:\\MaterialSearch_tmp\\MaterialSearchWindows\\lib\\'
     'site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.', {"system": {"os": "Windows"}},
     "https://github.com/chn-lee-yumi/MaterialSearch/issues/105"),
    ("nvml-driver-mismatch", "nvidia-smi \nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124",
     {}, "https://github.com/tinygrad/open-gpu-kernel-modules/issues/47"),
    ("numpy-abi-mismatch", "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash. To support both "
     "1.x and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0.\n<stdin>:1: UserWarning: Failed to initialize "
     "NumPy: _ARRAY_API not found (Triggered internally at ..\\torch\\csrc\\utils\\tensor_numpy.cpp:84.)", {},
     "https://github.com/xai4space/meteors/issues/20"),
    ("cuda-toolkit-mismatch", "RuntimeError: The detected CUDA version (12.4) mismatches the version that was used to compile "
     "PyTorch (11.8). Please make sure to use the same CUDA versions.", {}, "shared case 033"),
    ("wsl-driver-in-guest", "cudaGetDeviceCount returned 35\n-> CUDA driver version is insufficient for CUDA runtime version",
     {"system": {"kernel": "5.10.16.3-microsoft-standard-WSL2"}}, "https://github.com/microsoft/WSL/issues/8174"),
    ("stub-libcuda", "Running main() from gtest_main.cc\nCUDA API Error at line 28: CUDA driver is a stub library", {},
     "https://github.com/xmake-io/xmake/issues/4686"),
    ("cuda-forward-compat", "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW",
     {}, "https://github.com/AIR-DISCOVER/ICRA2024-Sim2Real-AXS/issues/5"),
    ("fabric-manager-missing", "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
     "calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized", {},
     "https://github.com/huggingface/huggingface_hub/issues/4134"),
]


@pytest.mark.parametrize("code,text,extra,source", REAL_ERRORS, ids=[f"{c}-{i}" for i, (c, *_r) in enumerate(REAL_ERRORS)])
def test_reported_error_text_alone_names_its_code(code, text, extra, source):
    assert code_matches(_REG.code(code), text), (code, source)
    f = the(text_facts(text, **extra), code)
    assert f.severity == "error", (code, source)
    assert f.fix.commands, code


# ---------------------------------------------------------------- driver-too-old

def test_driver_535_is_too_old_for_cu130_and_cu126_of_the_same_release_runs(t214):
    f = the(with_driver(t214, "535.104.05"), "driver-too-old")
    assert f.severity == "error"
    assert f.title == "Driver 535.104.05 is too old for torch 2.14.1+cu130 (built with CUDA 13.0)"
    assert f.evidence["min_driver_for_build"] == "580"
    assert "python -m pip install --force-reinstall torch==2.14.1 torchvision==0.29.1 " \
           "--index-url https://download.pytorch.org/whl/cu126" in f.fix.commands


def test_minor_version_compatibility_and_a_working_cuda_are_not_flagged(t214):
    assert "driver-too-old" not in found(with_driver(t214, "580.65.06"))
    facts = copy.deepcopy(t214)
    facts["torch"].update(version="2.14.1+cu126", cuda="12.6")
    # At the cu12x floor the build runs through minor-version compatibility: not an error; but when
    # CUDA is unavailable there, the driver below 12.6's own minimum is the first suspect (warning).
    assert "driver-too-old" not in found(with_driver(facts, "525.60.13"), severity=("error",))
    assert the(with_driver(facts, "525.60.13"), "driver-too-old").severity == "warning"
    assert "driver-too-old" not in found(with_driver(facts, "560.35.05"))  # 12.6's own minimum
    assert "driver-too-old" in found(with_driver(facts, "520.61.05"))
    # The live answer wins over the table: CUDA initialised, so the driver is new enough.
    assert "driver-too-old" not in found(with_driver(t214, "535.104.05", cuda_available=True))


def test_conda_pytorch_gets_conda_commands():
    facts = text_facts("", torch={"version": "2.1.0", "cuda": "12.1", "status": "ok", "cuda_available": False},
                       nvml={"status": "ok", "driver_version": "470.182.03"},
                       packages={"distributions": [{"name": "pytorch", "version": "2.1.0", "installer": "conda"}]})
    facts.pop("user_error")
    f = the(facts, "driver-too-old")
    assert "conda install pytorch==2.1.0 pytorch-cuda=11.8 -c pytorch -c nvidia" in f.fix.commands


# ---------------------------------------------------------------- gpu-arch-unsupported

def gpu_facts(t214, name, cap):
    f = with_driver(t214, "580.95.05", gpus=(name,), cuda_available=True)
    f["torch"]["devices"] = [{"index": 0, "name": name, "capability": cap}]
    return f


def test_pascal_gpu_on_the_cu130_build_gets_a_variant_with_sm61(t214):
    f = the(gpu_facts(t214, "NVIDIA GeForce GTX 1080", "6.1"), "gpu-arch-unsupported")
    assert f.severity == "error"
    assert "(sm_61)" in f.title and "too old" in f.title
    assert f.evidence["build_archs_source"] == "torch.cuda.get_arch_list()"
    assert f.fix.commands == ("python -m pip install --force-reinstall torch==2.14.1 torchvision==0.29.1 "
                              "--index-url https://download.pytorch.org/whl/cu126",)


def test_supported_gpu_is_fine_and_the_live_arch_list_wins_over_the_kb(t214):
    assert "gpu-arch-unsupported" not in found(gpu_facts(t214, "NVIDIA GeForce RTX 3090", "8.6"))
    facts = gpu_facts(t214, "NVIDIA H100 80GB HBM3", "9.0")
    facts["torch"]["arch_list"] = ["sm_80", "sm_86"]  # a custom build: the kb's list for 2.14 cu130 has sm_90
    assert "gpu-arch-unsupported" in found(facts)


# ---------------------------------------------------------------- cudnn-mismatch

def test_older_cudnn_minor_at_run_time_is_incompatible_newer_is_fine(t214):
    facts = copy.deepcopy(t214)
    facts["torch"]["cudnn_version"] = 91000
    f = the(facts, "cudnn-mismatch")
    assert "built for 9.24.0, found 9.10.0" in f.title
    assert any(c.startswith("python -m pip install --force-reinstall --no-deps nvidia-cudnn-cu13==9.24.0.43") for c in f.fix.commands)
    facts["torch"]["cudnn_version"] = 92500
    assert "cudnn-mismatch" not in found(facts)


# ---------------------------------------------------------------- library-shadowing

def test_ld_library_path_with_system_cuda_is_a_risk_when_loaded_libraries_are_unknown(t214):
    facts = copy.deepcopy(t214)
    facts["torch"].pop("loaded_libraries")
    facts["torch"].pop("loaded_libraries_before_init")
    facts["environment"]["vars"] = {"LD_LIBRARY_PATH": "/usr/local/cuda-12.4/lib64:/opt/intel/lib"}
    f = the(facts, "library-shadowing")
    assert f.severity == "warning"
    assert "export LD_LIBRARY_PATH=/opt/intel/lib" in f.fix.commands


def test_cublas_from_a_system_cuda_is_named(t214):
    facts = copy.deepcopy(t214)
    for d in facts["torch"]["loaded_libraries"]["libraries"]:
        if d["name"] == "libcublas.so.13":
            d["path"] = d["realpath"] = "/usr/local/cuda-13.0/lib64/libcublas.so.13"
    facts["environment"]["vars"] = {"LD_LIBRARY_PATH": "/usr/local/cuda-13.0/lib64"}
    f = the(facts, "library-shadowing")
    assert "/usr/local/cuda-13.0/lib64/libcublas.so.13" in f.title
    assert f.evidence["libcublas.so.13 loaded via"] == "LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64"
    assert "unset LD_LIBRARY_PATH" in f.fix.commands


# ---------------------------------------------------------------- stub-libcuda

def test_stub_directory_on_ld_library_path(t214):
    facts = copy.deepcopy(t214)
    facts["environment"]["vars"] = {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64:/usr/local/cuda/lib64/stubs"}
    f = the(facts, "stub-libcuda")
    assert f.fix.commands[0] == "export LD_LIBRARY_PATH=/usr/local/cuda/lib64"
    assert f.severity == "error"  # CUDA did not initialise here


# ---------------------------------------------------------------- cuda-toolkit-mismatch

def test_toolkit_major_mismatch_is_a_warning_until_the_user_builds_extensions(t214):
    facts = copy.deepcopy(t214)
    facts["toolkit"]["nvcc_version"] = "12.4"
    f = the(facts, "cuda-toolkit-mismatch")
    assert f.severity == "warning" and "12.4" in f.title and "13.0" in f.title
    facts["user_error"] = {"text": "building 'mmcv._ext' extension\nerror: command '/usr/local/cuda/bin/nvcc' failed with exit code 1"}
    assert the(facts, "cuda-toolkit-mismatch").severity == "error"
    facts["toolkit"]["nvcc_version"] = "13.1"
    f = the(facts, "cuda-toolkit-mismatch")
    assert f.severity == "warning" and "minor" in f.title
    facts["toolkit"]["nvcc_version"] = "13.0"
    assert "cuda-toolkit-mismatch" not in found(facts)


# ---------------------------------------------------------------- companions

def test_torchvision_of_another_release(t214):
    facts = copy.deepcopy(t214)
    facts["torch"]["companions"]["torchvision"]["version"] = "0.28.0+cu130"
    facts["torch"]["companions"]["torchvision"]["extension_loaded"] = False
    f = the(facts, "torchvision-mismatch")
    assert f.severity == "error" and "belongs to torch 2.13" in f.title
    assert f.fix.commands == ("python -m pip install --force-reinstall --no-deps torchvision==0.29.1 "
                              "--index-url https://download.pytorch.org/whl/cu130",)


def test_numpy2_with_torch_built_against_numpy1():
    facts = text_facts("", torch={"version": "2.2.2+cu118", "cuda": "11.8", "status": "ok"},
                       packages={"distributions": [{"name": "numpy", "version": "2.0.1", "installer": "pip"}]})
    facts.pop("user_error")
    f = the(facts, "numpy-abi-mismatch")
    assert f.severity == "warning" and f.fix.commands[0] == 'python -m pip install "numpy<2"'
    facts["torch"]["import_warnings"] = ["Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
                                         "../torch/csrc/utils/tensor_numpy.cpp:84.)"]
    assert the(facts, "numpy-abi-mismatch").severity == "error"
    facts["torch"].update(version="2.3.0+cu118")
    facts["torch"].pop("import_warnings")
    assert "numpy-abi-mismatch" not in found(facts)


def test_two_torch_directories_on_sys_path(t214):
    facts = copy.deepcopy(t214)
    facts["python"]["user_site_enabled"] = True
    facts["torch"]["location"] = "/root/.local/lib/python3.11/site-packages/torch/__init__.py"
    facts["torch"]["version"] = "2.13.0+cu130"
    facts["packages"]["torch_sources"] = [
        {"path": "/root/.local/lib/python3.11/site-packages/torch", "version": "2.13.0+cu130"},
        {"path": "/work/venvs/t214/lib/python3.11/site-packages/torch", "version": "2.14.1+cu130"}]
    f = the(facts, "multiple-torch-installs")
    assert f.title.startswith("torch 2.13.0+cu130 is imported, but torch 2.14.1+cu130 is also installed")
    assert any("~/.local copy" in c for c in f.fix.commands)
    assert "multiple-torch-installs" not in found(t214)


# ---------------------------------------------------------------- platform

def test_python_without_wheels():
    facts = text_facts("", python={"version": "3.9.18", "bits": 64}, torch={"status": "not-installed"},
                       system={"os": "Linux", "arch": "armv7l"})
    facts.pop("user_error")
    f = the(facts, "python-unsupported")
    assert "armv7l" in f.title
    facts["system"]["arch"] = "x86_64"
    facts["python"]["version"] = "3.99.0"
    f = the(facts, "python-unsupported")
    assert "no torch release has wheels for Python 3.99" in f.title
    assert any("uv venv --python" in c for c in f.fix.commands)
    facts["python"]["version"] = "3.12.3"
    assert "python-unsupported" not in found(facts)


def test_a_pinned_release_without_wheels_for_this_python_even_with_torch_installed():
    text = ("ERROR: Could not find a version that satisfies the requirement torch==1.13.1 (from versions: 2.2.0, 2.2.1, 2.2.2, "
            "2.3.0, 2.3.1, 2.4.0, 2.4.1, 2.5.0, 2.5.1, 2.6.0, 2.7.0, 2.7.1)\nERROR: No matching distribution found for torch==1.13.1")
    # https://github.com/facebookresearch/ImageBind/issues/139 (Python 3.12)
    facts = text_facts(text, python={"version": "3.12.3", "bits": 64}, torch={"version": "2.7.1+cu126", "status": "ok"})
    f = the(facts, "python-unsupported")
    assert f.title == "No PyTorch wheel for this interpreter: torch 1.13.1 has wheels for Python 3.7–3.11, not 3.12"
    assert "uv venv --python 3.11 .venv  # or: conda create -n torch python=3.11; or python3.11 -m venv .venv" in f.fix.commands
    # pip saw versions for this Python and the pin is one of them: not this code
    facts = text_facts(text.replace("1.13.1", "2.9.9"), python={"version": "3.12.3", "bits": 64}, torch={"status": "not-installed"})
    assert "python-unsupported" not in found(facts)


def test_windows_paging_file_too_small_is_named():
    text = ('OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
            '"C:\\venv\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.')
    f = the(text_facts(text, system={"os": "Windows"}), "windows-pagefile-too-small")
    assert "paging file" in f.title and any("Virtual memory" in c for c in f.fix.commands)
    assert "dll-load-failure" not in found(text_facts(text, system={"os": "Windows"}))


def test_windows_probe_facts_name_the_missing_dll(tmp_path):
    from test_windows_probe import windows_tree, wp

    torch_dir, sys32 = windows_tree(tmp_path, ["KERNEL32.dll", "libomp140.x86_64.dll", "VCRUNTIME140.dll"])
    win = wp.probe(str(torch_dir), str(sys32), path_dirs=[])
    facts = text_facts("", windows=win, system={"os": "Windows"},
                       torch={"status": "import-failed"},
                       packages={"distributions": [{"name": "torch", "version": "2.4.0+cu121", "installer": "pip"}]})
    facts.pop("user_error")
    f = the(facts, "dll-load-failure")
    assert f.severity == "error" and "libomp140.x86_64.dll" in f.title
    assert "python -m pip install --force-reinstall torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121" in f.fix.commands


def test_wsl_guest_libcuda_is_found(t214):
    facts = with_driver(t214, "566.36")
    facts["system"]["wsl"] = True
    facts["torch"]["loaded_libraries"]["libraries"].append(
        {"name": "libcuda.so.1", "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "realpath": "/usr/lib/x86_64-linux-gnu/libcuda.so.560.35.03"})
    f = the(facts, "wsl-driver-in-guest")
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.1" in f.title
    facts["system"]["wsl"] = False
    assert "wsl-driver-in-guest" not in found(facts)


# ---------------------------------------------------------------- driver state

def test_nvml_mismatch_status_is_its_own_code_not_a_probe_failure(t214):
    facts = copy.deepcopy(t214)
    facts["nvml"] = {"status": "driver-library-mismatch", "error": "Driver/library version mismatch", "error_code": 18}
    facts["system"]["distro"] = "Ubuntu 22.04.4 LTS"
    rep = report(facts)
    f = next(f for f in rep.findings if f.code == "nvml-driver-mismatch")
    assert f.severity == "error"
    assert any("remove them" in c for c in f.fix.commands)  # recorded inside a docker container
    assert not [x for x in rep.findings if x.code == "probe-failed" and "mismatch" in x.title]
    facts["system"]["container"] = None
    f = the(facts, "nvml-driver-mismatch")
    assert "sudo reboot  # loads the kernel module that matches the upgraded libraries" in f.fix.commands
    assert "sudo apt-get --fix-broken install" in f.fix.commands


def test_forward_compat_on_geforce_but_not_on_a100(t214):
    facts = with_driver(t214, "535.104.05", gpus=("NVIDIA GeForce RTX 3090",))
    facts["environment"]["vars"] = {"LD_LIBRARY_PATH": "/usr/local/cuda/compat:/usr/local/nvidia/lib64"}
    f = the(facts, "cuda-forward-compat")
    assert "GeForce RTX 3090" in f.title
    assert f.fix.commands[0] == "export LD_LIBRARY_PATH=/usr/local/nvidia/lib64"
    facts = with_driver(t214, "535.104.05", gpus=("NVIDIA A100-SXM4-80GB",))
    facts["environment"]["vars"] = {"LD_LIBRARY_PATH": "/usr/local/cuda/compat:/usr/local/nvidia/lib64"}
    assert "cuda-forward-compat" not in found(facts)


def test_eight_sxm_gpus_that_cuda_cannot_use_point_at_fabric_manager(t214):
    facts = with_driver(t214, "570.133.20", gpus=("NVIDIA H100 80GB HBM3",) * 8, cuda_available=False)
    facts["system"]["distro"] = "Ubuntu 22.04.5 LTS"
    f = the(facts, "fabric-manager-missing")
    assert f.severity == "warning"
    assert "sudo apt-get install nvidia-fabricmanager-570=570.133.20-*  # its version must equal the driver's exactly" in f.fix.commands
    facts["torch"]["cuda_init_error"] = {"message": "Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized"}
    assert the(facts, "fabric-manager-missing").severity == "error"


def test_recorded_hgx_node_with_nvswitch_links_is_fine_until_cuda_fails():
    facts = load_fixture("hgx-8x-h100-healthy.json")  # NVML recording of an HGX H100 node (devices branch)
    assert "fabric-manager-missing" not in found(facts)
    facts["torch"]["cuda_available"] = False
    facts["torch"]["device_count"] = 0
    f = the(facts, "fabric-manager-missing")
    assert f.evidence["nvlinks_to_nvswitch"] is True
    assert "sudo apt-get install nvidia-fabricmanager-580=580.159.04-*  # its version must equal the driver's exactly" in f.fix.commands


# ---------------------------------------------------------------- collect_env text, end to end
# vLLM's sectioned collect_env layout (as in shared case 039), with the values of each scenario.

VLLM_TPL = """Collecting environment information...
==============================
        System Info
==============================
OS                           : Ubuntu 22.04.4 LTS (x86_64)
GCC version                  : Could not collect
Clang version                : Could not collect
CMake version                : Could not collect
Libc version                 : glibc-2.35
==============================
       PyTorch Info
==============================
PyTorch version              : {torch}
Is debug build               : False
CUDA used to build PyTorch   : {tcuda}
ROCM used to build PyTorch   : N/A
==============================
      Python Environment
==============================
Python version               : 3.12.3 (main, Nov  6 2024, 18:32:19) [GCC 13.2.0] (64-bit runtime)
Python platform              : {plat}
==============================
       CUDA / GPU Info
==============================
Is CUDA available            : {avail}
CUDA runtime version         : {nvcc}
CUDA_MODULE_LOADING set to   : LAZY
GPU models and configuration : {gpus}
Nvidia driver version        : {driver}
cuDNN version                : Could not collect
HIP runtime version          : N/A
MIOpen runtime version       : N/A
Is XNNPACK available         : True
==============================
Versions of relevant libraries
==============================
{pkgs}
[conda] Could not collect
==============================
     Environment Variables
==============================
{env}
"""


def vllm_text(torch="2.6.0+cu126", tcuda="12.6", plat="Linux-5.15.0-52-generic-x86_64-with-glibc2.35", avail="True",
              nvcc="Could not collect", gpus="GPU 0: NVIDIA GeForce RTX 4090", driver="560.35.03",
              pkgs="[pip3] torch==2.6.0+cu126\n[pip3] nvidia-cublas-cu12==12.6.4.1", env="NCCL_CUMEM_ENABLE=0"):
    return VLLM_TPL.format(**locals())


COLLECT_ENV_SCENARIOS = {
    "healthy": ({}, None),
    "stub-libcuda": ({"avail": "False", "env": "LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib64/stubs"}, "error"),
    "cuda-forward-compat": ({"avail": "False", "driver": "535.183.01",
                             "env": "LD_LIBRARY_PATH=/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64"}, "error"),
    "fabric-manager-missing": ({"avail": "False", "driver": "570.124.06",
                                "gpus": "\n".join(f"GPU {i}: NVIDIA H100 80GB HBM3" for i in range(8))}, "warning"),
    "wsl-driver-in-guest": ({"avail": "False", "driver": "566.36",
                             "plat": "Linux-5.15.167.4-microsoft-standard-WSL2-x86_64-with-glibc2.35"}, "warning"),
    "library-shadowing": ({"env": "LD_LIBRARY_PATH=/usr/local/cuda-12.4/lib64"}, "warning"),
    "torchvision-mismatch": ({"pkgs": "[pip3] torch==2.6.0+cu126\n[pip3] torchvision==0.20.1+cu124"}, "error"),
    "driver-too-old": ({"avail": "False", "driver": "470.256.02"}, "error"),
    "gpu-arch-unsupported": ({"torch": "2.8.0+cu128", "tcuda": "12.8", "gpus": "GPU 0: NVIDIA GeForce GTX 1080 Ti",
                              "driver": "570.124.04", "pkgs": "[pip3] torch==2.8.0+cu128"}, "error"),
}


@pytest.mark.parametrize("name", sorted(COLLECT_ENV_SCENARIOS))
def test_collect_env_scenarios(name, tmp_path):
    values, severity = COLLECT_ENV_SCENARIOS[name]
    p = tmp_path / "env.txt"
    p.write_text(vllm_text(**values))
    r = CliRunner().invoke(cli, ["check", "--from-collect-env", str(p), "--format", "json"], catch_exceptions=False)
    findings = [(f["severity"], f["code"]) for f in json.loads(r.output)["findings"]]
    if severity is None:
        assert not findings, findings
    else:
        assert (severity, name) in findings, findings
        assert not [c for s, c in findings if s == "error" and c != name], findings


def test_this_machines_collect_env_says_probably_no_driver():
    """Real collect_env from this GPU-less machine: 'Could not collect' driver and GPUs, CUDA build,
    CUDA unavailable -> a no-nvidia-driver warning (the text cannot prove it), and no error."""
    from pathlib import Path
    from click.testing import CliRunner
    import json as _json
    from cudadoctor.cli import cli as _cli

    p = Path(__file__).parent / "fixtures" / "collect_env" / "thismachine-torch2141-cu130-nodriver.txt"
    out = _json.loads(CliRunner().invoke(_cli, ["check", "--from-collect-env", str(p), "--format", "json"]).output)
    got = {(f["code"], f["severity"]) for f in out["findings"]}
    assert ("no-nvidia-driver", "warning") in got
    assert not [f for f in out["findings"] if f["severity"] == "error"]


def _gen_text(gpu="NVIDIA A100-SXM4-80GB", torch="2.4.0+cu121", cuda="12.1", driver="535.129.03", avail="True"):
    return (f"PyTorch version: {torch}\nIs debug build: False\nCUDA used to build PyTorch: {cuda}\n"
            "ROCM used to build PyTorch: N/A\n\nOS: Ubuntu 22.04.4 LTS (x86_64)\n"
            "Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)\n"
            f"Is CUDA available: {avail}\nCUDA runtime version: Could not collect\n"
            f"GPU models and configuration: GPU 0: {gpu}\nNvidia driver version: {driver}\n"
            "cuDNN version: Could not collect\n\nVersions of relevant libraries:\n"
            f"[pip3] torch=={torch}\n[conda] Could not collect\n")


def _from_text(tmp_path, text, error):
    from click.testing import CliRunner
    import json as _json
    from cudadoctor.cli import cli as _cli

    p = tmp_path / "ce.txt"
    p.write_text(text)
    r = CliRunner().invoke(_cli, ["check", "--from-collect-env", str(p), "--error", error, "--format", "json"])
    return _json.loads(r.output)["findings"]


def test_no_kernel_image_on_a_gpu_torch_supports_blames_an_extension(tmp_path):
    """A100 (sm_80) is in torch 2.4 cu121's list: the kernel that failed was built elsewhere."""
    fs = _from_text(tmp_path, _gen_text(), "RuntimeError: CUDA error: no kernel image is available for execution on the device")
    assert [f["code"] for f in fs if f["severity"] == "error"] == ["companion-arch-unsupported"]
    f = [f for f in fs if f["code"] == "companion-arch-unsupported"][0]
    assert "compute capability 8.0" in f["title"]
    assert any('TORCH_CUDA_ARCH_LIST="8.0"' in c for c in f["fix"]["commands"])


def test_no_kernel_image_names_the_kernel_package_from_vllm_collect_env():
    """vLLM's collect_env prints vLLM's version apart from the package lists; torch 2.7 cu126 has sm_61,
    so the failing kernel is vLLM's own (vllm-project/vllm#19542, GTX 1080 Ti)."""
    case = Path(__file__).parent / "data/holdout_cases/h08-vllm091-gtx1080ti-sm61"
    r = CliRunner().invoke(
        cli, ["check", "--from-collect-env", f"{case}.txt", "--error-file", f"{case}.error.txt", "--format", "json"]
    )
    fs = json.loads(r.output)["findings"]
    assert [f["code"] for f in fs if f["severity"] == "error"] == ["companion-arch-unsupported"]
    assert [f for f in fs if f["code"] == "companion-arch-unsupported"][0]["evidence"]["package"] == "vllm"


def test_no_cuda_gpus_are_available_is_no_gpu_visible(tmp_path):
    fs = _from_text(tmp_path, _gen_text(), "RuntimeError: No CUDA GPUs are available")
    assert [f["code"] for f in fs if f["severity"] == "error"] == ["no-gpu-visible"]


@pytest.mark.parametrize("want,error", [
    # pip's message for a wheel built for another Python or platform
    ("python-unsupported", "ERROR: torch-2.0.0-cp39-cp39-win_amd64.whl is not a supported wheel on this platform."),
    # torch/cuda/__init__.py's message when a CPU build is asked for CUDA
    ("cpu-only-torch", "AssertionError: Torch not compiled with CUDA enabled"),
    # CUDA's message for a device index past the visible devices
    ("no-gpu-visible", "RuntimeError: CUDA error: invalid device ordinal"),
])
def test_error_text_alone_names_the_cause_when_collect_env_knows_little(want, error):
    """Case 514's collect_env says almost nothing (torch failed to import); the error text must carry it."""
    from click.testing import CliRunner
    import json as _json
    from cudadoctor.cli import cli as _cli

    base = CASES / "514-ldpath-cuda124-vs-torch27-cu128-nvjitlink.txt"
    if not base.exists():
        pytest.skip("../shared/cases is not beside the repository")
    r = CliRunner().invoke(_cli, ["check", "--from-collect-env", str(base), "--error", error, "--format", "json"])
    fs = _json.loads(r.output)["findings"]
    assert any(f["code"] == want and f["severity"] in ("error", "warning") for f in fs), [(f["code"], f["severity"]) for f in fs]
