"""cudarc's driver-library lookup (the unversioned libcuda.so by name) -> libcuda-not-in-linker-cache; a cudarc whose
candidate list already holds libcuda.so.1 and still fails is not this cause. Real texts, URLs beside them."""

from __future__ import annotations

from checkcli import codes, paste_findings

OLD = (
    "thread 'main' panicked at /home/ichigo/.cargo/registry/src/index.crates.io-6f17d22bba15001f/cudarc-0.11.5/src/"
    "driver/sys/mod.rs:61:9:\n"
    'Unable to find cuda lib under the names ["cuda", "nvcuda"]. Please open GitHub issue.\n'
)


def test_cudarc_old_message_is_libcuda_not_in_linker_cache(tmp_path):
    # https://github.com/tracel-ai/burn/issues/2209
    assert "libcuda-not-in-linker-cache" in codes(paste_findings(tmp_path, OLD))


def test_cudarc_list_with_libcuda_so_1_is_not_this_cause(tmp_path):
    # https://github.com/EricLBuehler/mistral.rs/issues/1529 (a podman container: no driver library at all)
    text = (
        'Unable to dynamically load the "cuda" shared library - searched for library names: ["libcuda.so", '
        '"libcuda64.so", "libcuda64_12.so", "libcuda.so.12", "libcuda.so.11", "libcuda.so.10", "libcuda.so.1", '
        '"libnvcuda.so", "libnvcuda.so.1"]. Ensure that `LD_LIBRARY_PATH` has the correct path to the installed library. '
        "If the shared library is present on the system under a different name than one of those listed above, please "
        "open a GitHub issue.\n"
    )
    assert "libcuda-not-in-linker-cache" not in codes(paste_findings(tmp_path, text))


def test_cudarc_other_library_is_not_the_driver(tmp_path):
    # https://github.com/chelsea0x3b/cudarc/issues/274: cuBLAS, not the driver
    text = (
        'Unable to dynamically load the "cublas" shared library - searched for library names: ["cublas", "cublas64", '
        '"cublas64_12", "cublas64_125", "cublas64_125_0", "cublas64_120_5", "cublas64_10", "cublas64_120_0", '
        '"cublas64_9"]. Ensure that `LD_LIBRARY_PATH` has the correct path to the installed library.\n'
    )
    assert "libcuda-not-in-linker-cache" not in codes(paste_findings(tmp_path, text))
