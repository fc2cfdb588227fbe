"""Round 9, lib9: a CUDA-family library a companion package (onnxruntime-gpu, TensorFlow, faiss, a CUDA program)
loads at run time is absent, in the package's own words (kb/errors/lib9.json, each from the package's source at a
tag), or the package's CPU build is the one imported. Real texts from public threads, none from the blind batches."""

import json
from pathlib import Path

from checkcli import codes, paste_findings, severities

CORPUS = Path(__file__).parent / "data" / "error_corpus" / "lib9.jsonl"


def _rows():
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_corpus_text_is_read_as_its_code_from_the_paste(tmp_path):
    for row in _rows():
        got = codes(paste_findings(tmp_path, row["text"]))
        assert row["code"] in got, (row["source"], got)


def test_onnxruntime_cuda_path_message_with_or_without_apostrophe(tmp_path):
    # onnxruntime 1.14 printed "wasnt", 1.16 "wasn't" (onnxruntime_pybind_state.cc at those tags);
    # https://github.com/microsoft/onnxruntime/issues/21272 (the 'wasnt' form)
    text = (
        "onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasnt able to be loaded. "
        "Please install the correct version of CUDA andcuDNN as mentioned in the GPU requirements page"
    )
    assert severities(paste_findings(tmp_path, text)).get("cuda-library-missing") == "error"


def test_tensorflow_unversioned_cudnn_not_found_is_missing_not_mismatch(tmp_path):
    # https://github.com/tensorflow/tensorflow/issues/4168: no other cuDNN named -> absent, not another major
    text = (
        "I tensorflow/stream_executor/dso_loader.cc:105] Couldn't open CUDA library libcudnn.so. LD_LIBRARY_PATH: \n"
        "I tensorflow/stream_executor/cuda/cuda_dnn.cc:3304] Unable to load cuDNN DSO"
    )
    got = codes(paste_findings(tmp_path, text))
    assert "cuda-library-missing" in got
    assert "cudnn-mismatch" not in got


def test_tensorflow_driver_library_is_not_a_cuda_library_missing(tmp_path):
    # https://stackoverflow.com/q/41007279 (TensorFlow's own install guide lists it): nvcuda.dll is the driver's
    text = "[...\\stream_executor\\dso_loader.cc] Couldn't open CUDA library nvcuda.dll"
    assert "cuda-library-missing" not in codes(paste_findings(tmp_path, text))


def test_prose_that_only_names_a_library_is_silent(tmp_path):
    # a library named without a need or a failure: no finding
    for text in (
        "torch ships libcudnn.so.8 in its wheel",
        "pip install nvidia-cublas-cu12  # provides libcublas.so.12",
        "I have CUDA 12.4, faster-whisper 1.0.3 and ctranslate2 4.4.0 installed. But isn't cublasLt64_11.dll only part of CUDA 11?",
    ):
        assert "cuda-library-missing" not in codes(paste_findings(tmp_path, text)), text


def test_faiss_gpu_attribute_missing_is_the_cpu_build(tmp_path):
    # https://github.com/facebookresearch/faiss/issues/888 (a maintainer: "you are using the cpu-only Faiss")
    text = "AttributeError: module 'faiss' has no attribute 'StandardGpuResources'"
    assert "companion-cpu-only-build" in codes(paste_findings(tmp_path, text))
    # another module's missing attribute is not faiss's CPU build
    other = "AttributeError: module 'torch' has no attribute 'compile'"
    assert "companion-cpu-only-build" not in codes(paste_findings(tmp_path, other))


# --- the companions' CUDA and cuDNN (kb/companion_cuda.json) -----------------------------------------


def test_companion_table_rows_from_the_requirements_pages():
    from cudadoctor.checks.companions import companion_build

    # onnxruntime.ai CUDA EP requirements: 1.15-1.18 CUDA 11.8 + cuDNN 8 (PyPI default); 1.19+ CUDA 12 + cuDNN 9
    assert (companion_build("onnxruntime-gpu", "1.16.3") or {}).get("cuda") == "11.8"
    assert (companion_build("onnxruntime-gpu", "1.19.0") or {}).get("cudnn") == 9
    assert (companion_build("onnxruntime-gpu", "1.9.0") or {}).get("cuda") == "11.4"
    # onnxruntime#27130 (1.24: CUDA 12 on the main feed) and #29032 (1.27: CUDA 12 deprecated, the CUDA 13 build)
    assert (companion_build("onnxruntime-gpu", "1.26.0") or {}).get("cuda") == "12"
    assert (companion_build("onnxruntime-gpu", "1.27.0") or {}).get("cuda") == "13"
    # faster-whisper README: ctranslate2 4.5.0+ needs cuDNN 9, 4.4.0 cuDNN 8 (CUDA 12), 3.24.0 CUDA 11
    assert (companion_build("ctranslate2", "4.5.0") or {}).get("cudnn") == 9
    assert (companion_build("ctranslate2", "4.4.0") or {}).get("cudnn") == 8
    assert (companion_build("ctranslate2", "3.24.0") or {}).get("cuda") == "11"
    assert companion_build("onnxruntime-gpu", "banana") is None


def test_onnxruntime_failure_with_its_cudnn_major_stated_does_not_blame_cudnn(tmp_path):
    # https://github.com/microsoft/onnxruntime/issues/21740: onnxruntime-gpu 1.13.1 (CUDA 11.6 + cuDNN 8) with
    # CUDA 11.8 and cuDNN 8.9.2 said to be installed: the provider failed, nothing shows which library
    text = (
        "[Build] CUDA_PATH is set but CUDA wasn't able to be loaded (Windows 11, onnxruntime-gpu 1.13.1, CUDA 11.8)\n"
        "I have CUDA Toolkit 11.8 and cuDNN 8.9.2 installed, and I am using onnxruntime-gpu version 1.13.1."
    )
    got = codes(paste_findings(tmp_path, text))
    assert "cuda-library-missing" in got
    assert "cudnn-mismatch" not in got


def test_onnxruntime_built_for_cuda12_on_cuda11_is_a_missing_cuda_library(tmp_path):
    # https://github.com/microsoft/onnxruntime/issues/21769: 1.18.1 worked with CUDA 11.7; 1.19.0 (CUDA 12 + cuDNN 9)
    text = (
        "I used onnxruntime-gpu==1.18.1 before, it can load onnx and work in CUDA(11.7).\n"
        "Today, after upgrading to onnxruntime-gpu==1.19.0, it prompts that CUDA does not work\n"
        '[E:onnxruntime:Default, provider_bridge_ort.cc:1992 onnxruntime::TryGetProviderInfo_CUDA] LoadLibrary failed with error 126 "" '
        'when trying to load "C:\\Users\\sunny\\anaconda3\\envs\\pytorch\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"'
    )
    assert severities(paste_findings(tmp_path, text)).get("cuda-library-missing") == "error"


def test_tensorflow_cut_off_cudnn_check_line_is_a_cudnn_mismatch(tmp_path):
    # https://github.com/tensorflow/tensorflow/issues/17422's line, cut after the loaded version (as titles are)
    text = "2018-03-05 11:06:53.859047: E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 7005 (c"
    assert "cudnn-mismatch" in codes(paste_findings(tmp_path, text))
