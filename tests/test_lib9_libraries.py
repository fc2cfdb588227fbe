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
