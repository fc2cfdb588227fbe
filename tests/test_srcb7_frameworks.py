"""Round 7, srcb7: other CUDA frameworks' own wordings for the setup causes we have codes for, taken from their
source (TensorFlow/XLA cuda_diagnostics.cc and gpu_device.cc, PaddlePaddle gpu_resources.cc, numba cudadrv/driver.py,
MXNet storage.cc, onnxruntime provider_bridge_ort.cc; the table with the sites left unmapped is
cudadoctor/kb/errors/srcb7.json). Every real instance (tests/data/error_corpus/srcb7.jsonl, public threads) must give
its code in both forms: `check --from-collect-env X --error-file E` and `check --from-text PASTE`; healthy framework
logs must not give an error."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List

import pytest

from cudadoctor.errortext.signatures import parse
from checkcli import run_check, severities

HERE = Path(__file__).parent
KB = HERE.parent / "cudadoctor" / "kb" / "errors" / "srcb7.json"
CORPUS = HERE / "data" / "error_corpus" / "srcb7.jsonl"
#: A collect_env report that says nothing about torch or the GPU (these reports come from other frameworks).
THIN_ENV = "PyTorch version: N/A\nIs debug build: N/A\nCUDA used to build PyTorch: N/A\nOS: Ubuntu 22.04.3 LTS (x86_64)\nPython version: 3.10.12\n"
TAGGED = re.compile(r"^https://github\.com/[^/]+/[^/]+/blob/(?:v?\d[\w.\-]*|jax-v[\d.]+|b\d+)/\S+$")


def _rows() -> List[Dict[str, str]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _findings(args: List[str]) -> Dict[str, str]:
    assert args[0] == "check", args
    return severities(run_check(*args[1:]))


def _both_forms(tmp_path: Path, text: str) -> Dict[str, Dict[str, str]]:
    env, err = tmp_path / "env.txt", tmp_path / "error.txt"
    env.write_text(THIN_ENV, encoding="utf-8")
    err.write_text(text + "\n", encoding="utf-8")
    return {
        "facts": _findings(["check", "--from-collect-env", str(env), "--error-file", str(err)]),
        "paste": _findings(["check", "--from-text", str(err)]),
    }


def test_the_table_parses_and_every_entry_names_its_source_at_a_tag():
    doc = json.loads(KB.read_text(encoding="utf-8"))
    sigs = parse(doc)
    assert len(sigs) == len(doc["signatures"]) >= 8
    for s in doc["signatures"]:
        assert any(TAGGED.match(u) for u in s["sources"]), f"{s['regex'][:60]}: no source file at a tag"
        assert any("/issues/" in u for u in s["sources"]), f"{s['regex'][:60]}: no real thread quoting it"
    for site in doc["sites"]:
        assert TAGGED.match(site["source"]), site
        assert site["code"] or site["why"], f"an unmapped site says why: {site['message'][:60]}"


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["source"].rsplit("/", 3)[-3] + "#" + r["source"].rsplit("/", 1)[-1])
def test_each_real_instance_gives_its_code_in_both_forms(tmp_path, row):
    got = _both_forms(tmp_path, row["text"])
    for form, codes in got.items():
        assert row["code"] in codes, f"{form}: {codes}"


def test_each_mapped_signature_has_a_real_instance_in_the_corpus():
    doc = json.loads(KB.read_text(encoding="utf-8"))
    texts = [re.sub(r"\s+", " ", r["text"]) for r in _rows()]
    for s in doc["signatures"]:
        hits = [t for t in texts if re.search(s["regex"], t)]
        assert hits, f"no corpus text for {s['regex'][:60]}"


def test_tensorflow_warning_level_lines_alone_stay_warnings(tmp_path):
    # TensorFlow logs both at W level and carries on without the GPU (a CPU-only machine prints them too).
    dlopen = (
        "2021-05-09 10:00:00.000000: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU "
        "libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to "
        "use GPU. Follow the guide at https://www.tensorflow.org/install/gpu for how to download and setup the required "
        "libraries for your platform.\nSkipping registering GPU devices..."
    )
    jit = (
        "W0000 00:00:1753232013.685876   24341 gpu_device.cc:2431] TensorFlow was not built with CUDA kernel binaries "
        "compatible with compute capability 12.0. CUDA kernels will be jit-compiled from PTX, which could take 30 "
        "minutes or longer."
    )
    for text, code in ((dlopen, "cuda-library-missing"), (jit, "ptx-jit-on-first-cuda-call")):
        for form, codes in _both_forms(tmp_path, text).items():
            assert codes.get(code) == "warning", (form, codes)
            assert "error" not in codes.values(), (form, codes)


#: Healthy logs, verbatim from public threads where the GPU was used: TensorFlow finding and creating its device
#: (rstudio/tensorflow#311), XLA's driver-older-than-ptxas note (jax-ml/jax#19821, jax.devices() = [cuda(id=0)]),
#: Paddle's version notes on a working V100 (PaddlePaddle/PaddleSeg#3470), TensorFlow's diagnostician when versions match.
HEALTHY = [
    "2019-07-13 22:58:51.065751: I tensorflow/stream_executor/platform/default/dso_loader.cc:42] Successfully opened dynamic library libcuda.so.1\n"
    "2019-07-13 22:58:52.624418: I tensorflow/compiler/xla/service/service.cc:175]   StreamExecutor device (0): Tesla V100-PCIE-16GB, Compute Capability 7.0\n"
    "2019-07-13 22:58:52.646280: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1640] Found device 0 with properties: \n"
    "name: Tesla V100-PCIE-16GB major: 7 minor: 0 memoryClockRate(GHz): 1.38\npciBusID: 0000:3b:00.0",
    "2024-02-15 14:18:20.201828: W external/xla/xla/service/gpu/nvptx_compiler.cc:744] The NVIDIA driver's CUDA version is 12.2 which is "
    "older than the ptxas CUDA version (12.3.107). Because the driver is older than the ptxas version, XLA is disabling parallel compilation, "
    "which may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward compatibility packages.\n"
    "Array(1, dtype=int32, weak_type=True)",
    "gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 7.0, Driver API Version: 11.4, Runtime API Version: 11.7\n"
    "gpu_resources.cc:149] device: 0, cuDNN Version: 8.1.\n"
    "gpu_resources.cc:175] WARNING: device: 0. The installed Paddle is compiled with CUDA 11.7, but CUDA runtime version in your machine is 11.4, "
    "which may cause serious incompatible bug. Please recompile or reinstall Paddle with compatible CUDA version.",
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:200] libcuda reported version is: 470.57.2\n"
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:204] kernel reported version is: 470.57.2\n"
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:310] kernel version seems to match DSO: 470.57.2",
]


@pytest.mark.parametrize("text", HEALTHY, ids=["tf-found-device", "xla-ptxas-note", "paddle-version-note", "tf-dso-match"])
def test_healthy_framework_logs_give_no_error(tmp_path, text):
    for form, codes in _both_forms(tmp_path, text).items():
        assert "error" not in codes.values(), (form, codes)
        assert not {"nvml-driver-mismatch", "gpu-arch-unsupported", "driver-too-old"} & set(codes), (form, codes)
