"""Task build11 (issue 21, round 11): host-compiler-unsupported from the entities of a failed build when nvcc's own
refusal ("#error -- unsupported GNU version!") is not quoted: the gcc the text states, the CUDA toolkit it states, and
the limit that toolkit's crt/host_config.h sets (kb/host_compilers.json). Real texts from public threads (URL on
each); none from the blind batches."""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

# https://github.com/ggml-org/whisper.cpp/issues/2250 (a comment; title and reporter's words, gcc 14 with nvcc 12.5)
WHISPER_2250 = """CUDA compile falure, error: user-defined literal operator not found, type name not allowed, and undefines.

Hi, @Nolicx @joshuachris2001 . When I compiled the NVIDIA's CUDA sample [vectorAdd](https://github.com/NVIDIA/cuda-samples/tree/master/Samples/0_Introduction/vectorAdd) in Arch Linux, I came across same errors. My gcc version is `14.1.1 20240720`, and my nvcc version is `12.5.r12.5/compiler.34385749_0`.
"""

# https://github.com/fnalacceleratormodeling/synergia2/issues/215 (gcc 12 with CUDA 12.2: a supported pair; the
# failure was an nvcc bug fixed in 12.2.2, not the host compiler check)
SYNERGIA_215 = """Build error with CUDA 12.2.1 and GCC 12.2.0

Reproduced on perlmutter with `gcc@12.3.0` and `cuda@12.2.91`.

nvcc --version
nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2023 NVIDIA Corporation
Built on Tue_Jun_13_19:16:58_PDT_2023
Cuda compilation tools, release 12.2, V12.2.91
Build cuda_12.2.r12.2/compiler.32965470_0
"""


def test_a_failed_build_stating_a_gcc_newer_than_its_nvcc_accepts(tmp_path):
    found = paste_findings(tmp_path, WHISPER_2250)
    assert "host-compiler-unsupported" in codes(found), codes(found)
    assert severities(found)["host-compiler-unsupported"] == "warning"  # inferred, not nvcc's refusal quoted
    f = next(f for f in found if f["code"] == "host-compiler-unsupported")
    assert "gcc 14" in f["title"] and "gcc 13" in f["title"] and "12.5" in f["title"], f["title"]
    assert any("12.8" in c for c in f["fix"]["commands"]), f["fix"]  # kb: CUDA 12.8's nvcc is the first taking gcc 14


def test_a_gcc_the_toolkit_accepts_is_no_finding(tmp_path):
    assert "host-compiler-unsupported" not in codes(paste_findings(tmp_path, SYNERGIA_215))


def test_no_failed_build_no_finding(tmp_path):
    text = "gcc (GCC) 13.2.1 20230801\ncuda 12.3.0\nEverything builds and torch.cuda.is_available() returns True.\n"
    assert "host-compiler-unsupported" not in codes(paste_findings(tmp_path, text))


def test_a_toolkit_the_table_does_not_cover_is_no_guess(tmp_path):
    # https://github.com/NVlabs/instant-ngp/issues/671 (title + versions): CUDA 11.6 is older than kb's table (12.0 on)
    text = (
        "Build fails on Arch\n\nnvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.6, V11.6.124\n"
        "Build cuda_11.6.r11.6/compiler.31057947_0\n\ngcc (GCC) 12.1.0\n"
    )
    assert "host-compiler-unsupported" not in codes(paste_findings(tmp_path, text))
