"""Entities in error text (errortext/entities.py): a missing NVIDIA library and a version pair, in any tool's words.

Real texts: tests/data/error_corpus/libs3.jsonl (independent threads: CuPy, cuML, MXNet, Caffe on macOS, Paddle,
ffmpeg/NVENC) and lines of the unsealed blind batches, each with its thread.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import List

import pytest
from click.testing import CliRunner

from cudadoctor import registry
from cudadoctor.cli import cli
from cudadoctor.errortext import triage
from cudadoctor.errortext.entities import missing_libraries, table, version_pairs, wanted_cuda

CORPUS = Path(__file__).parent / "data" / "error_corpus" / "libs3.jsonl"
ROWS = [json.loads(x) for x in CORPUS.read_text(encoding="utf-8").splitlines() if x.strip()]
REG = registry.load(plugins=False)


def _check(tmp_path: Path, text: str) -> List[dict]:
    f = tmp_path / "e.txt"
    f.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--from-text", str(f), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return [x for x in json.loads(r.stdout)["findings"] if x["severity"] in ("error", "warning")]


def test_the_library_table_has_sources_and_every_code_is_in_the_catalogue():
    doc = table()
    assert re.match(r"\d{4}-\d{2}-\d{2}$", doc["checked"])
    assert all(s["url"].startswith("https://") for s in doc["sources"])
    for fam in doc["families"]:
        assert fam["names"] and fam["kind"] in doc["codes"], fam["family"]
        for tab in (fam["sonames"], fam["dlls"]):
            assert all(isinstance(v, list) and v for v in tab.values()), fam["family"]
    assert {c for c in doc["codes"].values() if c} <= set(REG.codes)


@pytest.mark.parametrize(
    "line,name,means",
    [
        # tensorflow/tensorflow#14244: TF 1.4's own check on Windows names CUDA 8.0's DLL
        (
            "Could not find 'cudart64_80.dll'. TensorFlow requires that this DLL be installed in a directory",
            "cudart64_80.dll",
            ("8.0",),
        ),
        # lipzh5/ResearchProgress#17: TF 2.4 (CUDA 11.0) on CUDA 11.1: cuSOLVER's soname 10 is also CUDA 11.0's
        (
            "Could not load dynamic library 'libcusolver.so.10'; dlerror: libcusolver.so.10: cannot open shared object file",
            "libcusolver.so.10",
            ("10.1", "10.2", "11.0"),
        ),
        # arch4edu/arch4edu#24: ldd's words
        ("\tlibcudart.so.10.0 => not found", "libcudart.so.10.0", ("10.0",)),
        # BVLC/caffe#1273: macOS dyld
        ("dyld: Library not loaded: @rpath/libcudart.6.5.dylib", "libcudart.6.5.dylib", ()),
        # cupy/cupy#8317
        (
            "RuntimeError: CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared object file",
            "libnvrtc.so.12",
            ("12",),
        ),
        # michael-0brien/cryojax#559: JAX's words, no file name
        (
            "RuntimeError: jaxlib/cuda/versions_helpers.cc:81: operation cusparseGetProperty(MAJOR_VERSION, &major) failed: The cuSPARSE library was not found.",
            "cuSPARSE",
            (),
        ),
    ],
)
def test_a_missing_library_is_read_in_any_tools_words(line, name, means):
    (lib, *_rest) = missing_libraries(line)
    assert lib.name == name and lib.kind == "cuda" and lib.means == means


@pytest.mark.parametrize(
    "line",
    [
        "I tensorflow/stream_executor/platform/default/dso_loader.cc:48] Successfully opened dynamic library libcudart.so.10.1",
        "\tlibcudart.so.12 => /usr/local/cuda/lib64/libcudart.so.12 (0x00007f)",
        "ImportError: /usr/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12",
        "libcublas.so.12 is installed in /usr/local/cuda-12.1/lib64",
    ],
)
def test_a_library_that_is_there_is_not_missing(line):
    assert missing_libraries(line) == []


def test_what_a_library_number_says_about_the_cuda_wanted():
    (cufft,) = missing_libraries("OSError: libcufft.so.11: cannot open shared object file: No such file or directory")
    assert wanted_cuda(cufft)["wheel"] == "nvidia-cufft-cu12"  # cuFFT 11 is CUDA 12's (a cu11 wheel ships .so.10)
    (solver,) = missing_libraries("Could not load dynamic library 'libcusolver.so.10'; dlerror: not found")
    assert wanted_cuda(solver)["wheel"] is None  # CUDA 10.x / 11.0: no pip wheel ships it
    (dll,) = missing_libraries("Could not find 'cudart64_80.dll'. TensorFlow requires that this DLL be installed")
    assert wanted_cuda(dll)["old"] and wanted_cuda(dll)["release"] == "8.0"


@pytest.mark.parametrize(
    "line,library,required,found",
    [
        # PaddlePaddle/PaddleDetection#3331
        (
            "WARNING: device: 0. The installed Paddle is compiled with CUDNN 7.6, but CUDNN version in your machine is 7.4, which may",
            "cudnn",
            "7.6",
            "7.4",
        ),
        # tensorflow: "Loaded runtime CuDNN library: 7.0.4 but source was compiled with: 7.2.1" (b12-41's thread)
        ("Loaded runtime CuDNN library: 7.0.4 but source was compiled with: 7.2.1.", "cudnn", "7.2.1", "7.0.4"),
        # HandBrake/HandBrake#5641
        (
            "[h264_nvenc @ 0x1] Driver does not support the required nvenc API version. Required: 12.1 Found: 12.0",
            "driver",
            "12.1",
            "12.0",
        ),
    ],
)
def test_a_version_pair_is_read_with_both_versions(line, library, required, found):
    (p,) = version_pairs(line)
    assert (p.library, p.required, p.found) == (library, required, found)


@pytest.mark.parametrize("row", ROWS, ids=[r["source"].split("github.com/")[-1] for r in ROWS])
def test_each_real_text_gives_its_cause(tmp_path, row):
    got = [f["code"] for f in _check(tmp_path, row["text"])]
    assert row["code"] in got, (row["source"], got)
    assert triage(row["text"], REG)["candidates"][0]["code"] == row["code"]


def test_the_finding_names_the_cuda_the_library_belongs_to(tmp_path):
    (f,) = _check(tmp_path, "Could not find 'cudart64_80.dll'. TensorFlow requires that this DLL be installed in a directory")
    assert f["code"] == "cuda-library-missing" and "CUDA 8.0" in f["title"] and "80" not in f["title"].replace("_80", "")
    (f,) = _check(tmp_path, "OSError: libcufft.so.11: cannot open shared object file: No such file or directory")
    assert any("nvidia-cufft-cu12" in c for c in f["fix"]["commands"]), f["fix"]


def test_a_signature_that_reads_the_line_keeps_its_cause(tmp_path):
    """CTranslate2's cuDNN sub-library message is cuda-library-missing by its own signature (platform2.json):
    the entity (cuDNN -> cudnn-mismatch) adds nothing on a line a signature already reads."""
    text = "Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!"
    assert triage(text, REG)["candidates"][0]["code"] == "cuda-library-missing"


def test_a_driver_newer_than_required_is_no_pair_finding():
    assert all(p.found != p.required for p in version_pairs("Required: 12.1 Found: 12.1 driver"))
