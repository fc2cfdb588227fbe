"""Session 23 (issue 21): causes that had no code, each recurring across blind batches and the public threads of its class
(wordings in kb/errors/b23.json, the checks in checks/build23.py): an extension's source using torch's removed THC
headers; CUDA 13's CCCL headers moved to include/cccl; a path over Windows' 260-character limit."""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

# MVIG-SJTU/AlphAction#84: torch 1.11.0+cu115.
ALPHACTION = """I tried to install the repo with pytorch 1.11.0+cu115 and I got the following error.
AlphAction/alphaction/csrc/cuda/ROIPool3d_cuda.cu:4:10: fatal error: THC/THC.h: No such file or directory
"""
# b142-02 (DetZero on torch 2.0.1), a Chinese-language gcc.
DETZERO = "torch 2.0.1\nfatal error: THC/THC.h: 没有那个文件或目录\n"
# MSVC's wording of the same (a Windows build of a pcdet-style extension).
MSVC_THC = "src\\roi_align_cuda.cpp(3): fatal error C1083: Cannot open include file: 'THC/THC.h': No such file or directory\n"

# b123-06 (DeepGEMM with CUDA 13.0, trimmed) and b123-07 (FlashMLA, its include path naming cuda-13.0).
DEEPGEMM = """nvcc --version
Cuda compilation tools, release 13.0, V13.0.48
third-party/cutlass/include/cutlass/cutlass.h:43:35: fatal error: cuda/std/utility: No such file or directory
"""
FLASHMLA = """-I/usr/local/cuda-13.0/include -c csrc/pybind.cpp
/root/workdir/FlashMLA/csrc/cutlass/include/cutlass/fast_math.h:42:10: fatal error: cuda/std/utility: No such file or directory
"""

# vulncheck-oss/sdk-python#1: pip's own hint (pypa/pip#10046).
PIP_HINT = """ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: 'C:\\\\Users\\\\<user-name>\\\\AppData\\\\Local\\\\Packages\\\\PythonSoftwareFoundation.Python.3.10_qbz5n2kfra8p0\\\\LocalCache\\\\local-packages\\\\Python310\\\\site-packages\\\\vulncheck_sdk\\\\models\\\\render_response_with_metadata_array_advisory_becton_dickinson_advisory_paginate_pagination.py'
HINT: This error might have occurred since this system does not have Windows Long Path support enabled. You can find information on how to enable this at https://pip.pypa.io/warnings/enable-long-paths
"""
# b124-02 (pip 19 on torch 1.1.0, before pip had the hint): the path alone, 265 characters.
PIP_OLD = (
    "ERROR: Could not install packages due to an EnvironmentError: [Errno 2] No such file or directory: "
    "'C:\\\\Users\\\\[username]\\\\AppData\\\\Local\\\\Packages\\\\PythonSoftwareFoundation.Python.3.7_qbz5n2kfra8p0\\\\"
    "LocalCache\\\\local-packages\\\\Python37\\\\site-packages\\\\caffe2\\\\python\\\\serialized_test\\\\data\\\\"
    "operator_test\\\\collect_and_distribute_fpn_rpn_proposals_op_test.test_collect_and_dist.zip'\n"
)
# b124-16: ninja on PyTorch's Windows CI.
NINJA_260 = "ninja: error: Stat(C:/actions-runner/_work/pytorch/pytorch/test/cpp_extensions/x/build/temp.win-amd64-cpython-310/Release/get_any_data_ptr.obj): Filename longer than 260 characters\n"


def test_an_extension_including_thc_headers_on_torch_1_11_or_newer(tmp_path):
    for text in (ALPHACTION, DETZERO, MSVC_THC):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("extension-source-uses-removed-thc-api") == "error", text[:40]
        fix = " ".join(c for f in found if f["code"] == "extension-source-uses-removed-thc-api" for c in f["fix"]["commands"])
        assert "C10_CUDA_CHECK" in fix and "THC/THC.h" in fix
    # torch 1.8 still ships THC: a missing THC.h there is not this cause
    assert "extension-source-uses-removed-thc-api" not in codes(
        paste_findings(tmp_path, ALPHACTION.replace("1.11.0+cu115", "1.8.1+cu111"))
    )


def test_cccl_headers_missing_under_cuda_13(tmp_path):
    for text in (DEEPGEMM, FLASHMLA):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("cuda13-cccl-headers-moved") == "error", text[:40]
        assert any("include/cccl" in c for f in found if f["code"] == "cuda13-cccl-headers-moved" for c in f["fix"]["commands"])
    # the CUDA unknown: a likely cause only
    bare = "fatal error: cuda/std/utility: No such file or directory\n"
    assert severities(paste_findings(tmp_path, bare)).get("cuda13-cccl-headers-moved") == "warning"
    # CUDA 12.4 keeps the headers in include/: not this cause
    cuda12 = DEEPGEMM.replace("release 13.0, V13.0.48", "release 12.4, V12.4.131")
    assert "cuda13-cccl-headers-moved" not in codes(paste_findings(tmp_path, cuda12))


def test_a_path_over_windows_max_path(tmp_path):
    for text in (PIP_HINT, PIP_OLD, NINJA_260):
        assert severities(paste_findings(tmp_path, text)).get("windows-path-too-long") == "error", text[:60]
    # a short path that does not exist is a missing file, not the limit
    short = (
        "ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: 'C:\\\\x\\\\torch-2.1.0.whl'\n"
    )
    assert "windows-path-too-long" not in codes(paste_findings(tmp_path, short))
