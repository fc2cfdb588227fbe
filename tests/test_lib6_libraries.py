"""Round 6, libraries on the load path: a missing cuDNN file is a missing library first; cuDNN's sub-library
version mismatch and an undefined CUDA-API symbol are two copies of a library mixed on the loader path."""

from __future__ import annotations

from pathlib import Path


from checkcli import codes, paste_findings, run_check, severities
from cudadoctor.errortext.entities import undefined_symbols

HOLDOUT = Path(__file__).parent / "data" / "holdout_cases"


def _codes(*args: str) -> list:
    return codes(run_check(*args))


def _text_codes(tmp_path: Path, text: str) -> list:
    return codes(paste_findings(tmp_path, text))


# faster-whisper/CTranslate2's (and cuDNN 8's own) words: https://github.com/SYSTRAN/faster-whisper/issues/516
CT2_CUDNN8 = (
    "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: "
    "No such file or directory\nAborted (core dumped)"
)


def test_a_missing_cudnn_file_alone_is_a_missing_library_first_and_a_split_cudnn_only_as_a_warning(tmp_path):
    # cuDNN 8's main library printed it (its sub-library loader): the missing file is the error, the split install a
    # warning (holdout h72 and error_corpus/cudnn.jsonl label such reports cudnn-mismatch).
    sev = severities(paste_findings(tmp_path, CT2_CUDNN8))
    assert sev.get("cuda-library-missing") == "error", sev
    assert sev.get("cudnn-mismatch") == "warning", sev
    # a missing main library (not cuDNN's own sub-library message) stays a missing library only
    codes = _text_codes(tmp_path, "OSError: libcudnn.so.8: cannot open shared object file: No such file or directory")
    assert "cudnn-mismatch" not in codes, codes


def test_a_missing_cudnn8_beside_a_stated_cudnn9_is_also_a_mismatch(tmp_path):
    codes = _text_codes(tmp_path, "pip list: nvidia-cudnn-cu12==9.1.0.70\n" + CT2_CUDNN8)
    assert "cuda-library-missing" in codes, codes
    assert "cudnn-mismatch" in codes, codes


def test_torch_failing_to_load_its_own_cudnn_keeps_cudnn_mismatch():
    # h73: torch 2.0.0+cu118 at its first convolution (its own cuDNN 8), https://github.com/AILab-CVC/Make-Your-Video/issues/4
    case = next(HOLDOUT.glob("h73-*.json")).with_suffix("")
    codes = _codes("--from-collect-env", f"{case}.txt", "--error-file", f"{case}.error.txt")
    assert "cudnn-mismatch" in codes, codes


def test_cudnn_sublibrary_version_mismatch_is_two_cudnn_copies(tmp_path):
    # cudnn_graph.h's cudnnStatus_t 1002 (cuDNN 9), as torch raises it
    codes = _text_codes(tmp_path, "RuntimeError: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH")
    assert "library-shadowing" in codes and "cudnn-mismatch" not in codes, codes


def test_undefined_symbols_of_cuda_library_apis_are_entities():
    got = {
        u.symbol: u.family
        for u in undefined_symbols(
            "python3: symbol lookup error: /x/libtorch.so.1: undefined symbol: cuCtxGetCurrent\n"
            "ImportError: /y/_C.so: undefined symbol: cudnnSetConvolutionGroupCount\n"
            "OSError: libtorch_cuda.so: undefined symbol: cusparseSpSM_analysis\n"
            "ImportError: /z/_ext.so: undefined symbol: cudaSetupArgument\n"
            "libcublas.so.11: undefined symbol: cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11\n"
        )
    }
    # cudart's cudaXxx (an extension built with another toolkit) and versioned symbols (their own signatures) are left out
    assert got == {"cuCtxGetCurrent": "driver", "cudnnSetConvolutionGroupCount": "cudnn", "cusparseSpSM_analysis": "cusparse"}


def test_an_undefined_cudnn_api_symbol_is_library_shadowing(tmp_path):
    codes = _text_codes(tmp_path, "ImportError: /opt/x/_C.so: undefined symbol: cudnnSetConvolutionGroupCount")
    assert "library-shadowing" in codes, codes


# Theano's own header-vs-library check (theano/gpuarray/dnn.py: "Mixed dnn version. The header is version %s while
# the library is version %s."), as cancerscope's README quotes it: https://github.com/Theano/Theano/blob/master/theano/gpuarray/dnn.py
THEANO_MIXED = "RuntimeError: Mixed dnn version. The header is version 5110 while the library is version 7401."


def test_a_header_and_library_version_pair_is_a_cudnn_mismatch(tmp_path):
    from cudadoctor.errortext.entities import version_pairs

    (p,) = version_pairs(THEANO_MIXED)
    assert (p.library, p.required, p.found) == ("cudnn", "5110", "7401")
    found = [f for f in paste_findings(tmp_path, THEANO_MIXED) if f["code"] == "cudnn-mismatch"]
    assert found and "5.1.10" in found[0]["title"] and "7.4.1" in found[0]["title"], found


# https://github.com/ContinuumIO/anaconda-issues/issues/12251 (Anaconda's cudatoolkit 11.0.221): both files in the env's lib
CONDA_CUBLAS = (
    "OSError: /home/u/anaconda3/envs/t/lib/python3.8/site-packages/torch/lib/../../../../libcublas.so.11: symbol "
    "free_gemm_select version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference"
)
# https://github.com/pytorch/pytorch/issues/120186: a pip wheel's library resolving its sibling from another install
PIP_NVJITLINK = (
    "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: symbol "
    "__nvJitLinkAddData_12_1 version libnvJitLink.so.12 not defined in file libnvJitLink.so.12 with link time reference"
)


def test_two_libraries_of_the_conda_envs_own_cudatoolkit_are_a_broken_build_not_shadowing(tmp_path):
    codes = _text_codes(tmp_path, CONDA_CUBLAS)
    assert "conda-cudatoolkit-broken-build" in codes and "library-shadowing" not in codes, codes
    codes = _text_codes(tmp_path, PIP_NVJITLINK)
    assert "library-shadowing" in codes and "conda-cudatoolkit-broken-build" not in codes, codes
