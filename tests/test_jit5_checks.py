"""Issue 21, round 5 (helper jit5): the driver's PTX JIT, its cache, PTX versions and the nvidia-uvm device.

Every text here is real, from a public thread (URL beside it) other than the blind batches' cases the rules were
first seen in (b15-33, b15-101, b15-110, b15-111, b16-16, b19-22, b19-45); the batches are scored by
test_blind_batches and the same texts run through triage in tests/data/error_corpus/jit5.jsonl.
"""

from __future__ import annotations

import re

from cudadoctor import registry
from cudadoctor.checks.jit import _ptx_only
from cudadoctor.facts import Facts, new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)


def _got(text: str = "", **sections):
    facts = new_facts("collect_env")
    if text:
        facts["user_error"] = {"text": text}
    for k, v in sections.items():
        facts[k] = v
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


# ---------------------------------------------------------------- CUresult 221: the JIT compiler library is missing

# https://github.com/jax-ml/jax/issues/9644 (JAX on NixOS: TensorFlow's stream executor wording)
JAX_9644 = (
    "RuntimeError: UNKNOWN: PTX JIT compiler library not found\n"
    "in external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_asm_compiler.cc(56): "
    "'cuLinkCreate(0, nullptr, nullptr, &link_state)'"
)
# https://github.com/JuliaGPU/cuTile.jl/issues/9 (CUDA.jl: message, number and enum name)
CUTILE_9 = "ERROR: CUDA error: PTX JIT compiler library not found (code 221, ERROR_JIT_COMPILER_NOT_FOUND)"
# https://github.com/rusty1s/pytorch_sparse/issues/78 (torch's "CUDA error:" wording)
SPARSE_78 = "    inv_mask = ~mask\nRuntimeError: CUDA error: PTX JIT compiler library not found"


def test_jit_compiler_missing_in_three_tools_words():
    for text in (JAX_9644, CUTILE_9, SPARSE_78):
        got = _got(text)
        assert "ptx-jit-compiler-missing" in got, text
        f = got["ptx-jit-compiler-missing"]
        assert f.severity == "error"
        assert "no-nvidia-driver" not in got  # the driver is there: only its JIT library is not
        assert any("ptxjitcompiler" in c for c in f.fix.commands)


# ---------------------------------------------------------------- 222 as a bare number beside PTX words

# https://github.com/mit-han-lab/inter-operator-scheduler/issues/4
IOS_4 = (
    "Cuda failure: 222 the provided PTX was compiled with an unsupported toolchain.\n/home/ubuntu/ios/src/ios/ios_runtime.cu:1332"
)


def test_222_beside_ptx_is_driver_too_old_and_other_222s_are_not():
    assert "driver-too-old" in _got(IOS_4)
    for text in ("ptxas info    : Used 222 registers, 360 bytes cmem[0]", "nvcc compiled 222 files"):
        assert "driver-too-old" not in _got(text), text


# ---------------------------------------------------------------- nvidia-uvm: the node absent, error 30

# https://github.com/cBio/cbio-cluster/issues/389 (docker run with explicit --device entries)
CBIO_389 = (
    "Error response from daemon: Cannot start container 23e6442e787b: error gathering device information while "
    'adding custom device "/dev/nvidia-uvm": lstat /dev/nvidia-uvm: no such file or directory'
)
# https://github.com/NVIDIA/nvidia-docker/issues/471 (strace inside the container)
NVD_471 = 'stat("/dev/nvidia-uvm", 0x7ffc23ea4730) = -1 ENOENT (No such file or directory)'
# https://github.com/NVIDIA/DIGITS/issues/799 (Caffe, CUDA 7.5: error 30 in the old numbering; nvidia-modprobe fixed it)
DIGITS_799 = "F0528 22:26:23.117558 13844 syncedmem.hpp:18] Check failed: error == cudaSuccess (30 vs. 0) unknown error"


def test_uvm_node_missing_in_docker_and_strace_words():
    for text in (CBIO_389, NVD_471):
        got = _got(text)
        assert "nvidia-uvm-not-loaded-after-reboot" in got, text
        assert any("nvidia-modprobe -u" in c for c in got["nvidia-uvm-not-loaded-after-reboot"].fix.commands)


def test_legacy_error_30_unknown_is_the_uvm_class():
    assert "nvidia-uvm-stale" in _got(DIGITS_799)
    # 30 is cudaErrorUnknown only in the numbering of CUDA <= 10.0: a 30 that is not CUDA's says nothing
    assert "nvidia-uvm-stale" not in _got("Epoch 30 done: loss 0.31, unknown error rate 2%")


# ---------------------------------------------------------------- the PTX JIT at the first CUDA call, its cache

# https://github.com/tensorflow/tensorflow/issues/39052 (TensorFlow's log line; a maintainer explains the JIT)
TF_39052 = "Relying on driver to perform ptx compilation. This message will be only logged once."
# https://github.com/microsoft/onnxruntime/pull/10781 (onnxruntime's own warning after a slow JIT start)
ORT_10781 = "CUDA took more than 30 seconds to start, please see this issue for how to fix it"
# https://github.com/facebookresearch/faiss/issues/1416 (PTX-only build, cache location not writable)
FAISS_1416 = (
    "in my case, the default cache location wasn't writable leading the application to recompile the PTX with "
    "every context creation"
)


def test_first_call_jit_is_a_warning_from_other_tools_words():
    for text in (TF_39052, ORT_10781):
        got = _got(text)
        assert "ptx-jit-on-first-cuda-call" in got, text
        assert got["ptx-jit-on-first-cuda-call"].severity == "warning"
    # a first call of seconds is CUDA's lazy initialisation, not a JIT of the whole library
    assert "ptx-jit-on-first-cuda-call" not in _got("The first call to .cuda() takes about 2 seconds, later calls are fast")


def test_jit_cache_unusable_from_text_and_from_the_environment():
    assert "cuda-jit-cache-disabled" in _got(FAISS_1416)
    got = _got(environment={"vars": {"CUDA_CACHE_DISABLE": "1"}})
    assert got["cuda-jit-cache-disabled"].evidence.get("CUDA_CACHE_DISABLE") == "1"
    assert "cuda-jit-cache-disabled" not in _got(environment={"vars": {"CUDA_CACHE_DISABLE": "0"}})


def _torch(archs, cap, name):
    return {
        "status": "ok",
        "version": "2.5.1",
        "cuda": "12.4",
        "arch_list": archs,
        "devices": [{"index": 0, "name": name, "capability": cap}],
    }


def test_ptx_only_build_is_reasoned_from_the_arch_list_and_the_capability():
    # a build with sm_80 SASS and compute_80 PTX on an RTX 3090 (8.6): sm_80 runs on 8.6 (same major), no JIT
    fx = new_facts("collect_env")
    fx["torch"] = _torch(["sm_75", "sm_80", "compute_80"], "8.6", "NVIDIA GeForce RTX 3090")
    assert _ptx_only(Facts(fx)) is None
    # the same build on an RTX 4090 (8.9)... still sm_80 SASS: no JIT; on an H100 (9.0): only compute_80 PTX runs
    fx["torch"] = _torch(["sm_75", "sm_80", "compute_80"], "9.0", "NVIDIA H100 80GB HBM3")
    ev = _ptx_only(Facts(fx))
    assert ev is not None and ev["compute_capability"] == "9.0"
    got = _got(torch=_torch(["sm_75", "sm_80", "compute_80"], "9.0", "NVIDIA H100 80GB HBM3"))
    f = got["ptx-jit-on-first-cuda-call"]
    assert f.severity == "warning" and re.search(r"only PTX", f.title)
