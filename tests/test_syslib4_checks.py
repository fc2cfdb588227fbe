"""Issue 21, system libraries below torch (task syslib4): glibc-too-old, libstdcxx-too-old, libcuda-not-in-linker-cache.

The checks reason from entities (a GLIBC_ / GLIBCXX_ / CXXABI_ version node and the binary that wanted it, an
undefined std:: symbol, the unversioned libcuda.so) and the facts (the distro's glibc from the kb table, conda, WSL,
Colab, a driver shown). Every text is real, from a public thread (URL beside it); the rules came from the blind cases
b16-12, b16-13, b17-10, b16-43, b16-53, b17-22 and are held here to texts of OTHER threads.
"""

from __future__ import annotations

import re

from cudadoctor import registry
from cudadoctor.errortext import kb_document
from cudadoctor.facts import new_facts
from cudadoctor.interpret import vtuple
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)


def _got(text: str, **system):
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": text}
    if system:
        facts["system"] = dict(system)
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


# ---------------------------------------------------------------- glibc

# https://github.com/pytorch/pytorch/issues/123649 (pytorch/ao CI on an old image after the manylinux_2_28 move)
AO_CI = (
    "ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by "
    "/__w/_temp/conda_environment_11714251538/lib/python3.10/site-packages/torch/lib/libtorch_python.so)"
)
# https://github.com/meta-pytorch/data/issues/844 (Ubuntu 18.04, a package's own .so, through libm)
TORCHDATA = (
    "/lib/x86_64-linux-gnu/libm.so.6: version `GLIBC_2.29' not found (required by "
    "/home/ry26099/miniconda3/envs/torchdata/lib/python3.9/site-packages/torchdata/_torchdata.so)"
)


def test_glibc_too_old_reads_the_version_node_and_the_distro_glibc():
    got = _got(AO_CI, os="Linux", distro="CentOS Linux 7 (Core)")
    f = got["glibc-too-old"]
    assert f.severity == "error"
    assert f.evidence["glibc_needed"] == "2.28"
    assert f.evidence["glibc_here"].startswith("2.17")
    assert "libtorch_python.so" in f.evidence["required_by"]
    # torch's own binary on glibc 2.17: an older torch is a fix (the kb table: 2.7+ needs 2.28)
    assert any("torch" in c and "pip install" in c for c in f.fix.commands), f.fix.commands
    assert "no-nvidia-driver" not in got and "cuda-library-missing" not in got


def test_glibc_too_old_for_another_package_names_that_package_not_torch():
    f = _got(TORCHDATA, os="Linux", distro="Ubuntu 18.04.6 LTS")["glibc-too-old"]
    assert f.evidence["glibc_needed"] == "2.29"
    assert f.evidence["glibc_here"].startswith("2.27")  # Ubuntu 18.04's, from the kb table
    assert "torch's" not in f.title and "_torchdata.so" in f.evidence["required_by"]
    assert not any("pip install 'torch" in c for c in f.fix.commands)


def test_glibc_facts_outrank_the_distro_table():
    f = _got(AO_CI, os="Linux", distro="Ubuntu 18.04", libc="glibc 2.26")["glibc-too-old"]
    assert f.evidence["glibc_here"] == "2.26 (system.libc)"


def test_glibcxx_is_not_read_as_glibc():
    got = _got(
        "ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
        "/home/***/lib/python3.10/site-packages/torch/lib/libtorch_python.so)"
    )
    assert "glibc-too-old" not in got and "libstdcxx-too-old" in got


# ---------------------------------------------------------------- libstdc++

# https://github.com/RenYurui/PIRender/issues/21 (conda's old libstdc++ found first; no quotes around the node)
PIRENDER = (
    "ImportError: /miniconda3/envs/PIRender/lib/python3.6/site-packages/torch/lib/../../../.././libstdc++.so.6: version "
    "GLIBCXX_3.4.29 not found (required by .cache/torch_extensions/nvdiffrast_plugin/nvdiffrast_plugin.so)"
)
# https://github.com/PythonOT/POT/issues/366 and https://github.com/albarji/proxTV/issues/41 (undefined C++ runtime symbols)
POT = (
    "ImportError: /home/alexis/singbrain/repo/POT/ot/lp/emd_wrap.cpython-37m-x86_64-linux-gnu.so: undefined symbol: "
    "_ZSt28__throw_bad_array_new_lengthv"
)
PROXTV = (
    "ImportError: /home/qpi2/anaconda3/lib/python3.6/site-packages/_prox_tv.abi3.so: undefined symbol: "
    "__cxa_throw_bad_array_new_length"
)


def test_libstdcxx_too_old_names_the_gcc_and_the_conda_fix():
    f = _got(PIRENDER)["libstdcxx-too-old"]
    assert f.evidence["needs"].startswith("GLIBCXX_3.4.29 (libstdc++ of GCC 11.1")
    assert "miniconda3" in f.evidence["libstdcxx_loaded"]
    assert any("libstdcxx-ng" in c for c in f.fix.commands)


def test_undefined_cxx_runtime_symbols_are_an_old_libstdcxx():
    for text in (POT, PROXTV):
        got = _got(text)
        assert "libstdcxx-too-old" in got, (text, list(got))


def test_torch_abi_symbols_and_libcxx_symbols_are_not_an_old_libstdcxx():
    # https://github.com/pytorch/pytorch/issues/51039 family: a torch (c10) symbol is the extension ABI, not libstdc++
    abi = (
        "ImportError: /x/ext.so: undefined symbol: "
        "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
    )
    assert "libstdcxx-too-old" not in _got(abi)
    # LLVM's libc++ (std::__1) is another library
    assert "libstdcxx-too-old" not in _got("undefined symbol: _ZNSt3__112basic_stringIcNS_11char_traitsIcEENS_9allocatorIcEEE")


# ---------------------------------------------------------------- libcuda.so

# https://github.com/triton-lang/triton/pull/2883 (Triton sees only libcuda.so.1)
TRITON = (
    "AssertionError: libcuda.so cannot found!\nPossible files are located at ['/lib64/libcuda.so.1'].Please create a "
    "symlink of libcuda.so to any of the file."
)
# https://github.com/state-spaces/mamba/issues/123 (Triton's launcher link)
LD_LCUDA = "/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status"


def test_unversioned_libcuda_with_the_driver_shown_is_an_error():
    f = _got(TRITON)["libcuda-not-in-linker-cache"]
    assert f.severity == "error"  # libcuda.so.1 is named: the driver is there
    assert "no-nvidia-driver" not in _got(TRITON)


def test_unversioned_libcuda_alone_is_a_hypothesis_naming_the_check():
    f = _got(LD_LCUDA)["libcuda-not-in-linker-cache"]
    assert f.severity == "warning" and "ldconfig -p | grep libcuda" in f.title


def test_wsl_and_colab_get_their_own_directory():
    wsl = _got("RuntimeError: Failed to dlopen libcuda.so", os="Linux", distro="Ubuntu 22.04 on WSL2")
    assert any("/usr/lib/wsl/lib" in c for c in wsl["libcuda-not-in-linker-cache"].fix.commands)
    colab = _got(TRITON, os="Linux (Google Colab)")
    assert any("/usr/lib64-nvidia" in c for c in colab["libcuda-not-in-linker-cache"].fix.commands)


def test_libcuda_so_1_missing_stays_no_driver():
    got = _got("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory", os="Linux")
    assert "libcuda-not-in-linker-cache" not in got
    assert "no-nvidia-driver" in got


def test_a_healthy_loader_line_gives_nothing():
    ok = "libcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\nGLIBCXX_3.4.30\nGLIBC_2.35"
    got = _got(ok, os="Linux")
    assert not {"libcuda-not-in-linker-cache", "libstdcxx-too-old", "glibc-too-old"} & set(got)


# ---------------------------------------------------------------- the tables


def test_the_tables_parse_and_are_ordered():
    doc = kb_document("syslib4.json")
    for key in ("glibc_by_distro", "manylinux", "torch_linux_glibc", "libstdcxx_versions"):
        assert doc[key]["sources"] and doc[key]["checked"], key
        assert all(s["url"].startswith("https://") for s in doc[key]["sources"])
    for d in doc["glibc_by_distro"]["distros"]:
        re.compile(d["match"])
        assert vtuple(d["glibc"]), d
    assert doc["manylinux"]["tags"]["manylinux2014"] == "2.17" and doc["manylinux"]["tags"]["manylinux_2_28"] == "2.28"
    rel = doc["torch_linux_glibc"]["releases"]
    assert [vtuple(r["glibc"]) for r in rel] == sorted(vtuple(r["glibc"]) for r in rel)
    for node in ("GLIBCXX", "CXXABI"):
        tab = doc["libstdcxx_versions"][node]
        keys = sorted(tab, key=lambda v: vtuple(v) or ())
        assert [vtuple(tab[k]) for k in keys] == sorted(vtuple(tab[k]) for k in keys), node  # newer node, newer GCC


# https://github.com/facebookresearch/nougat/issues/115 (WSL2; closed as a duplicate of #105, whose fix was a libcuda link)
NOUGAT_115 = (
    "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: "
    "No such file or directory\nAborted"
)
# https://github.com/jhj0517/Whisper-WebUI/issues/294 (cuDNN's own file missing: not libcuda)
WHISPER_OPS = (
    "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: "
    "No such file or directory"
)


def test_cudnn_cnn_infer_needing_libcuda_so_is_read_from_its_error_part():
    got = _got(NOUGAT_115, os="Linux", distro="Ubuntu 22.04 (WSL2)")
    assert got["libcuda-not-in-linker-cache"].severity == "error"
    assert "libcuda-not-in-linker-cache" not in _got(WHISPER_OPS, os="Linux", distro="Ubuntu 22.04 (WSL2)")


def test_cnn_infer_without_its_reason_is_a_wsl_hypothesis_only_under_wsl():
    bare = "Could not load library libcudnn_cnn_infer.so.8"
    f = _got(bare, os="Linux", distro="Ubuntu 22.04 on WSL2")["libcuda-not-in-linker-cache"]
    assert f.severity == "warning" and f.title.startswith("Likely:")
    assert "libcuda-not-in-linker-cache" not in _got(bare, os="Linux", distro="Ubuntu 22.04")
    own = "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file"
    assert "libcuda-not-in-linker-cache" not in _got(own, os="Linux", distro="Ubuntu 22.04 on WSL2")


# https://github.com/pytorch/pytorch/issues/156215 (Ubuntu 18.04: torch 2.7 wheels are manylinux_2_28 only; uv's words)
UV_PIP = (
    "      and torch==2.7.0+cu118 has no wheels with a matching platform tag (e.g., `manylinux_2_27_x86_64`), we can "
    "conclude that torch==2.7.0 cannot be used.\n"
    "      hint: Wheels are available for `torch` (v2.7.0+cu118) on the following platforms: `manylinux_2_28_x86_64`, "
    "`win_amd64`"
)
# https://github.com/astral-sh/uv/issues/14268 (uv sync's words for the same platform-tag mismatch)
UV_SYNC = (
    "hint: You're on Linux (`manylinux_2_27_x86_64`), but `torch` (v2.7.0) only has wheels for the following platforms: "
    "`manylinux_2_28_aarch64`, `manylinux_2_28_x86_64`, `macosx_11_0_arm64`, `win_amd64`"
)


def test_uv_platform_tags_give_the_glibc_here_and_needed():
    for text in (UV_PIP, UV_SYNC):
        f = _got(text)["glibc-too-old"]
        assert f.evidence["glibc_needed"] == "2.28" and f.evidence["glibc_here"].startswith("2.27"), text
        assert any("uv cache clean" in c for c in f.fix.commands)  # uv#14268: a stale cached glibc also reads so


def test_uv_wheels_for_another_architecture_only_are_not_the_glibc():
    other = (
        "hint: You're on Linux (`manylinux_2_35_aarch64`), but `foo` (v1.0) only has wheels for the following platforms: "
        "`manylinux_2_17_x86_64`, `win_amd64`"
    )
    assert "glibc-too-old" not in _got(other)
