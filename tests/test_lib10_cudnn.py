"""cudnn-mismatch from entities: a program names the cuDNN major it was built for (the file it could not load:
cudnn64_7.dll, libcudnn_ops.so.9) and the facts or the text show a cuDNN of another major.

Texts are real (public threads, URLs beside them); none comes from the blind batches.
"""

from __future__ import annotations

from checkcli import codes, paste_findings

PADDLE7 = (
    "RuntimeError: (PreconditionNotMet) The third-party dynamic library (cudnn64_7.dll) that Paddle depends on is not "
    "configured correctly. (error code is 126)\n"
    "  Suggestions:\n"
    "  1. Check if the third-party dynamic library (e.g. CUDA, CUDNN) is installed correctly and its version is matched "
    "with paddlepaddle you installed.\n"
)


def test_paddle_built_for_cudnn7_with_cudnn8_found_is_a_mismatch(tmp_path):
    # https://github.com/PaddlePaddle/Paddle/issues/29428 (burakpols, 2021-11-10): renaming cudnn64_8.dll fixed it
    text = (
        PADDLE7 + "\nı had cudnn64_7.dll error. ı found cudnn64_8.dll on my cuda directory then renamed  it cudnn64_7.dll and "
        "fixed. Also  if you try it backup cudnn64_8.dll file.\n"
    )
    f = paste_findings(tmp_path, text)
    assert "cudnn-mismatch" in codes(f)
    mm = next(x for x in f if x["code"] == "cudnn-mismatch")
    assert mm["evidence"]["cudnn_major_wanted"] == 7


def test_paddle_cudnn_line_alone_is_a_missing_library_not_a_mismatch(tmp_path):
    # https://github.com/PaddlePaddle/Paddle/issues/34566: cuDNN was simply not installed
    c = codes(paste_findings(tmp_path, PADDLE7))
    assert "cuda-library-missing" in c
    assert "cudnn-mismatch" not in c


def test_same_major_present_is_not_a_mismatch(tmp_path):
    # https://github.com/PaddlePaddle/Paddle/issues/29428 (description): cuDNN 7.6.5 copied in, still not found
    text = "python 3.8.3\npaddle 2.0.0rc0\ncuda10.2 cudnn 7.6.5 已经复制进去\n但依然说没有cudnn\n\n" + PADDLE7
    assert "cudnn-mismatch" not in codes(paste_findings(tmp_path, text))


def test_paddle_cudnn8_with_cuda118_and_no_other_cudnn_is_not_a_mismatch(tmp_path):
    # https://github.com/PaddlePaddle/PaddleOCR/issues/11230
    text = (
        "找不到cudnn64_8.dll？\n"
        "RuntimeError: (PreconditionNotMet) The third-party dynamic library (cudnn64_8.dll) that Paddle depends on is "
        "not configured correctly. (error code is 126)\n"
        "以上是报错，以下是我电脑和环境的情况，cuda版本11.8，用python -m pip install paddlepaddle-gpu==2.5.2 安装的paddlepaddle-gpu\n"
    )
    assert "cudnn-mismatch" not in codes(paste_findings(tmp_path, text))


def test_jax_cuda12_cusparse_unloadable_is_likely_shadowed(tmp_path):
    # https://github.com/jax-ml/jax/issues/30050 (fixed by unsetting LD_LIBRARY_PATH, as in jax-ml/jax#29843)
    text = (
        "After upgrading to **`jax[cuda12]==0.6.2`** in a fresh **micromamba** environment, JAX cannot initialize the "
        "CUDA backend because it cannot find **cuSPARSE**:\n\n```\n"
        "ERROR:2025-07-08 12:39:34,990 jax._src.xla_bridge:444] Jax plugin configuration error: Exception when calling "
        "jax_plugins.xla_cuda12.initialize()\n...\nRuntimeError: Unable to load cuSPARSE. Is it installed?\n"
        "WARNING:2025-07-08 12:39:34,994 jax._src.xla_bridge:794] An NVIDIA GPU may be present on this machine, but a "
        "CUDA-enabled jaxlib is not installed. Falling back to cpu.\n```\n"
    )
    f = paste_findings(tmp_path, text)
    assert "library-shadowing" in codes(f)
