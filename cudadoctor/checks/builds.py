"""Extension builds that cannot find what they compile with: CUDA_HOME that is not one toolkit directory, and no
GPU to read the target architecture from.

torch.utils.cpp_extension takes CUDA_HOME (or CUDA_PATH) exactly as it is set and runs
``os.path.join(CUDA_HOME, "bin", "nvcc")`` (torch/utils/cpp_extension.py: ``_find_cuda_home``,
``_join_cuda_home``). A value written like PATH (``/usr/local/cuda:/usr/local/cuda-11.8``), with a
stray ':' (``export CUDA_HOME=$CUDA_HOME:/usr/local/cuda`` while CUDA_HOME was empty), with quotes
inside it, or naming the toolkit's bin/ directory or nvcc itself gives an nvcc path that does not exist,
although nvcc is installed. The build log shows the malformed path (signatures:
kb/errors/builds2.json); a live run records the value itself (``toolkit.cuda_home``).

With TORCH_CUDA_ARCH_LIST unset, torch.utils.cpp_extension compiles for the architecture of every GPU torch sees
(``_get_cuda_arch_flags``); tiny-cuda-nn's setup.py reads it from torch.cuda unless TCNN_CUDA_ARCHITECTURES is set.
Where torch sees no GPU while building (``docker build``, a build node or notebook without one, a torch that cannot
see the GPU) the list is empty and the build stops ("arch_list[-1] += '+PTX'" IndexError; "Unknown compute
capability. Specify the target compute capabilities in the TCNN_CUDA_ARCHITECTURES ...").

The pytorch conda packages of the CUDA 8-11 era do not carry the CUDA runtime: they link against the environment's
``cudatoolkit`` conda package. Without it (or with another version) ``import torch`` stops at ``from torch._C import *``
("ImportError: libcudart.so.9.0: cannot open shared object file").

sudo replaces PATH with its secure_path (env_reset, /etc/sudoers): a build run as `sudo python setup.py install` does
not see the CUDA bin directory the user's shell adds, and cannot find nvcc although it is installed.

Extensions whose setup.py compiles their CUDA code only when it finds CUDA at build time (torch.cuda.is_available()
and CUDA_HOME, or FORCE_CUDA=1: detectron2, maskrcnn-benchmark, torch-scatter/-sparse/-cluster, ...) built where
none was found are CPU-only builds: "RuntimeError: Not compiled with GPU support" on the first CUDA tensor.

Codes: cuda-home-malformed, extension-build-without-gpu-arch-unset, conda-cudatoolkit-missing,
sudo-resets-path-nvcc-not-found, extension-built-without-cuda.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

from cudadoctor import kb
from cudadoctor.facts import Facts
from cudadoctor.interpret import gpus, in_conda_env
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match, search

CUDA_HOME_MALFORMED = Code(
    code="cuda-home-malformed",
    title="CUDA_HOME is not one toolkit directory (a PATH-style list, a stray ':', quotes, or bin/ or nvcc itself)",
    area="toolkit",
    severity="error",
    explanation={
        "what": "Building a CUDA extension cannot run nvcc although it is installed: the path the build runs is "
        "CUDA_HOME joined with bin/nvcc, and CUDA_HOME is malformed, so the log shows a path such as "
        "':/usr/local/cuda-11.1/bin/nvcc', '/usr/local/cuda:/usr/local/cuda-9.0/bin/nvcc' or '/usr/local/cuda-11.8:/bin/nvcc' "
        '("unable to execute ...: No such file or directory", "[Errno 2] No such file or directory", "/bin/sh: 1: ...: not found").',
        "why": "torch.utils.cpp_extension uses CUDA_HOME (or CUDA_PATH) exactly as set and appends bin/nvcc. CUDA_HOME "
        "names one directory, the toolkit's root; written like PATH (`export CUDA_HOME=$CUDA_HOME:/usr/local/cuda` while "
        "it was empty leaves a leading ':'; several toolkits joined by ':'), with quotes inside the value, or set to the "
        "toolkit's bin/ directory or to nvcc itself, it names no directory that exists.",
        "confirm": '`echo "$CUDA_HOME"` (a \':\', quotes, or a value ending in /bin or /nvcc); `ls "$CUDA_HOME/bin/nvcc"`; '
        "`grep -n CUDA_HOME ~/.bashrc ~/.profile`.",
        "fix": "Set CUDA_HOME to the one toolkit root (`export CUDA_HOME=/usr/local/cuda-<version>`, no ':', no quotes "
        "inside, not .../bin), fix the line in ~/.bashrc that builds it, open a new shell, and rebuild (after removing the "
        "build/ directory). PATH gets $CUDA_HOME/bin; LD_LIBRARY_PATH gets $CUDA_HOME/lib64.",
    },
    links=(
        "https://pytorch.org/docs/stable/cpp_extension.html",
        "https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py",
    ),
)

BUILD_WITHOUT_GPU_ARCH = Code(
    code="extension-build-without-gpu-arch-unset",
    title="An extension build found no GPU to read the target architecture from, and no architecture list is set",
    area="toolkit",
    severity="error",
    explanation={
        "what": "Compiling a CUDA extension stops before nvcc runs: torch's \"arch_list[-1] += '+PTX'\" raises "
        '"IndexError: list index out of range", or tiny-cuda-nn\'s setup.py says "Unknown compute capability. Specify the '
        'target compute capabilities in the TCNN_CUDA_ARCHITECTURES environment variable ...".',
        "why": "With TORCH_CUDA_ARCH_LIST unset, torch.utils.cpp_extension compiles for the architecture of each GPU torch "
        "sees (tiny-cuda-nn likewise unless TCNN_CUDA_ARCHITECTURES is set). While building, torch saw none: `docker build` "
        "gives its RUN steps no GPU, a build node or a notebook may have none, or torch cannot see the GPU this machine has "
        "(a CPU-only torch, a driver problem). So the list of targets is empty.",
        "confirm": '`python -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"` where the build '
        "runs (False / 0); `echo $TORCH_CUDA_ARCH_LIST` is empty; the GPUs it will run on: "
        "`nvidia-smi --query-gpu=name,compute_cap --format=csv`.",
        "fix": 'Name the target architectures for the build: `export TORCH_CUDA_ARCH_LIST="8.6"` (the compute capabilities '
        'of the GPUs it will run on, e.g. "7.5;8.0;8.6+PTX"; in a Dockerfile an ENV line before the RUN that builds), and '
        "TCNN_CUDA_ARCHITECTURES=86 for tiny-cuda-nn. If this machine has a GPU that torch does not see, fix that first "
        "(`cudadoctor check`).",
    },
    links=(
        "https://pytorch.org/docs/stable/cpp_extension.html",
        "https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py",
        "https://github.com/NVlabs/tiny-cuda-nn#pytorch-extension",
    ),
)

CONDA_CUDATOOLKIT_MISSING = Code(
    code="conda-cudatoolkit-missing",
    title="A conda build of torch cannot load the CUDA libraries its environment's cudatoolkit package should provide",
    area="libraries",
    severity="error",
    explanation={
        "what": '`import torch` in a conda environment stops at `from torch._C import *` with "ImportError: '
        'libcudart.so.9.0: cannot open shared object file" (or libnvToolsExt.so.1, libcublas.so.N, ...).',
        "why": "The pytorch conda packages of the CUDA 8-11 era carry no CUDA runtime: they link against the cudatoolkit "
        "conda package of the same environment, of the CUDA version in their build string (py36_cuda9.0...). When that "
        "package is missing, was replaced by another version (a later install, or a channel that moved cudatoolkit on), "
        "or the environment was copied without it, the loader cannot find the library.",
        "confirm": "`conda list | grep -i -E '^(pytorch|cudatoolkit) '` (pytorch's build string names its CUDA; cudatoolkit "
        "missing or another version); `ls $CONDA_PREFIX/lib/libcudart.so*`.",
        "fix": "Install the cudatoolkit the pytorch package was built for in the same environment (`conda install "
        "cudatoolkit=9.0`, the version in the library's name), or reinstall pytorch together with its cudatoolkit "
        "(`conda install pytorch cudatoolkit=<X.Y> -c pytorch`); a torch from pip brings its own CUDA libraries instead.",
    },
    links=("https://pytorch.org/get-started/previous-versions/", "https://github.com/pytorch/pytorch/issues/10910"),
)
_CONDA_PATH = re.compile(
    r"(?:ana|mini)conda\d?\b|mini(?:forge|mamba)\d?\b|mambaforge|/conda/envs/|/opt/conda/|\bconda install\b", re.I
)
_LIB_VERSION = re.compile(r"lib(\w+?)\.so\.(\d+(?:\.\d+)?)")

SUDO_RESETS_PATH = Code(
    code="sudo-resets-path-nvcc-not-found",
    title="A build run under sudo cannot find nvcc: sudo resets PATH to its secure_path",
    area="toolkit",
    severity="error",
    explanation={
        "what": "A build or program started with sudo (`sudo python setup.py install`, `sudo pip install ...`, `sudo make`, "
        '`sudo ./build.sh`) says "nvcc: not found", "unable to execute \'nvcc\'" or "nvcc not in path", while `which nvcc` '
        "finds it in the user's own shell.",
        "why": "sudo does not pass the user's PATH on: with env_reset (the default) it sets PATH to the secure_path of "
        "/etc/sudoers, which does not hold /usr/local/cuda/bin that ~/.bashrc adds. CUDA_HOME and LD_LIBRARY_PATH are "
        "dropped the same way.",
        "confirm": "`which nvcc` (found) and `sudo sh -c 'echo $PATH; which nvcc'` (not found); `sudo grep secure_path "
        "/etc/sudoers`.",
        "fix": "Build without sudo (into a virtual environment or with `pip install --user`), or pass the environment on: "
        '`sudo env "PATH=$PATH" CUDA_HOME=$CUDA_HOME python setup.py install`.',
    },
    links=("https://www.sudo.ws/docs/man/sudoers.man/#secure_path", "https://askubuntu.com/questions/428234"),
)

EXTENSION_BUILT_WITHOUT_CUDA = Code(
    code="extension-built-without-cuda",
    title="A compiled extension was built without its CUDA code (no GPU or toolkit found when it was built)",
    area="packages",
    severity="error",
    explanation={
        "what": "An extension (detectron2, maskrcnn-benchmark, pytorch3d, torch-scatter, torch-sparse, mmcv, "
        'GroundingDINO, ...) works on CPU tensors but fails on CUDA ones: "RuntimeError: Not compiled with GPU support" '
        '(or "Not compiled with CUDA support"), mmcv\'s "nms_impl: implementation for device cuda:0 not found", '
        "GroundingDINO's \"NameError: name '_C' is not defined\" at `_C.ms_deform_attn_forward(` after \"Failed to load "
        'custom C++ ops. Running on CPU mode Only!".',
        "why": "Such setup.py files compile the CUDA kernels only when they find CUDA at build time: "
        "torch.cuda.is_available() and CUDA_HOME, or FORCE_CUDA=1. Built where torch saw no GPU (`docker build`, a "
        "build node, a CPU-only torch at that moment) or no toolkit, the extension is a CPU-only build. pip builds "
        "from source whenever no prebuilt wheel matches torch and CUDA.",
        "confirm": "`python -c 'import torch; from torch.utils.cpp_extension import CUDA_HOME; "
        "print(torch.cuda.is_available(), CUDA_HOME)'` where it was built (True and a toolkit directory are needed); "
        "`pip show -f <package>` lists no CUDA object.",
        "fix": "Install the prebuilt wheel for your torch and CUDA where there is one (e.g. from data.pyg.org's index), or "
        "rebuild with CUDA forced: `FORCE_CUDA=1 pip install --no-build-isolation --no-cache-dir --force-reinstall "
        "<package>` with CUDA_HOME set (in a Dockerfile: ENV FORCE_CUDA=1 and TORCH_CUDA_ARCH_LIST), after deleting "
        "any build/ directory of a source checkout.",
    },
    links=(
        "https://detectron2.readthedocs.io/en/latest/tutorials/install.html#common-installation-issues",
        "https://github.com/rusty1s/pytorch_scatter#installation",
    ),
)

# ---------------------------------------------------------------- build tools' own CUDA version checks

#: torch.utils.cpp_extension's check, in any translation (A1111 ships a Chinese one): the format keeps both versions
#: in parentheses, the detected toolkit's beside "CUDA" first and torch's beside "PyTorch" after it
#: ("The detected CUDA version (12.1) mismatches the version that was used to compile PyTorch (11.8)";
#: "检测到的 CUDA 版本 (12.1) 与用于编译 PyTorch (11.8) 的版本不匹配").
_CPP_EXTENSION_PAIR = re.compile(
    r"\bCUDA\b[^\n()]{0,40}\(\s*((?:[7-9]|1[0-3])\.\d+)\s*\)[^\n()]{0,80}?\bPyTorch\b[^\n()]{0,20}\(\s*((?:[7-9]|1[0-3])\.\d+)\s*\)",
    re.IGNORECASE,
)
#: DeepSpeed's op builder (op_builder/builder.py, CUDAMismatchException and its warning): "Installed CUDA version 12.2
#: does not match the version torch was compiled with 11.7".
_DEEPSPEED_PAIR = re.compile(
    r"Installed CUDA version (\d+\.\d+)\S* does not match the version torch was compiled with (\d+\.\d+)", re.IGNORECASE
)
#: apex's setup.py (check_cuda_torch_binary_vs_bare_metal) names only torch's version; the toolkit's is the `nvcc -V`
#: output it printed just before ("Compiling cuda extensions with ... Cuda compilation tools, release 11.2").
_APEX_TORCH = re.compile(r"Pytorch binaries were compiled with Cuda (\d+\.\d+)", re.IGNORECASE)
_NVCC_RELEASE = re.compile(r"Cuda compilation tools, release (\d+\.\d+)", re.IGNORECASE)


def build_tool_cuda_pair(*texts: str) -> Optional[Tuple[Optional[str], str]]:
    """(local toolkit's CUDA or None, torch's CUDA) as a build tool's own version check states them in the first of
    ``texts`` that holds one (torch.utils.cpp_extension in any language, DeepSpeed's op builder, apex's setup.py), or
    None. apex names only torch's; the toolkit's is then the `nvcc -V` release in any of the texts, if there."""
    for text in texts:
        for rx in (_CPP_EXTENSION_PAIR, _DEEPSPEED_PAIR):
            m = rx.search(text)
            if m:
                return m.group(1), m.group(2)
    for text in texts:
        m = _APEX_TORCH.search(text)
        if m:
            nvcc = next((n.group(1) for n in map(_NVCC_RELEASE.search, texts) if n), None)
            return nvcc, m.group(1)
    return None


#: The nvcc path the log shows, for the evidence's "CUDA_HOME was" (the part before /bin/nvcc).
_NVCC_PATH = re.compile(r"(?<![\w.-])(?P<home>:/[\w./-]*|/[\w./-]*:[\w./:-]*)/bin/nvcc(?![\w.-])")


def malformed_reason(value: str, windows: bool = False) -> Optional[str]:
    """Why a CUDA_HOME value is not one toolkit directory, or None when it may be one."""
    v = value.strip()
    if not v:
        return None
    if any(q in v for q in "\"'"):
        return "it holds quotes, which become part of the path"
    windows = windows or bool(re.match(r"^[A-Za-z]:[\\/]", v))  # "C:\\Program Files\\...": a Windows path
    sep = ";" if windows else ":"
    body = v[2:] if windows and re.match(r"^[A-Za-z]:", v) else v  # a drive letter's ':' is the path's
    if sep in body:
        return f"it is a list or holds a stray '{sep}' (written like PATH)"
    tail = re.sub(r"[\\/]+$", "", v).replace("\\", "/").lower()
    if tail.endswith(("/nvcc", "/nvcc.exe")):
        return "it names nvcc itself, not the toolkit's root"
    if tail.endswith("/bin"):
        return "it names the toolkit's bin directory, not its root"
    return None


def _fix(home_hint: str) -> Fix:
    cmds: List[str] = [
        "echo \"$CUDA_HOME\"  # one directory: no ':', no quotes, not .../bin",
        "grep -n CUDA_HOME ~/.bashrc ~/.profile ~/.zshrc 2>/dev/null  # the line that builds the bad value",
        f"export CUDA_HOME={home_hint}  # the toolkit's root (the directory holding bin/nvcc)",
        "export PATH=$CUDA_HOME/bin:$PATH LD_LIBRARY_PATH=$CUDA_HOME/lib64:$LD_LIBRARY_PATH",
        "rm -rf build/ && python -m pip install --no-build-isolation -v .  # rebuild with the fixed CUDA_HOME",
    ]
    return Fix(tuple(cmds), "torch.utils.cpp_extension runs CUDA_HOME/bin/nvcc with CUDA_HOME exactly as set.")


def _root_of(home: str) -> str:
    """The toolkit root the malformed value most likely meant: its last list entry that looks like a CUDA directory."""
    v = home.strip().strip("'\"")
    parts = [p for p in re.split(r";" if re.match(r"^[A-Za-z]:[\\/]", v) else r"[:;]", v) if p.strip("/\\ ")]
    cuda = [p for p in parts if "cuda" in p.lower()] or parts
    root = re.sub(r"[\\/](?:bin[\\/]?)?(?:nvcc(?:\.exe)?)?[\\/]*$", "", cuda[-1].strip().strip("'\"")) if cuda else ""
    return root or "/usr/local/cuda-<version>"


@check(CUDA_HOME_MALFORMED)
def cuda_home_malformed(fx: Facts) -> Iterator[Finding]:
    """CUDA_HOME malformed: seen in the build log's nvcc path, or in the value a live run recorded."""
    said = error_match(fx, CUDA_HOME_MALFORMED)
    if said:
        m = _NVCC_PATH.search(said[1])
        home = m.group("home") if m else ""
        yield CUDA_HOME_MALFORMED.finding(
            title="The build runs nvcc from a malformed CUDA_HOME"
            + (f" ('{home}'): not one toolkit directory" if home else ": not one toolkit directory"),
            evidence={said[0]: said[1], **({"CUDA_HOME (from the nvcc path)": home} if home else {})},
            fix=_fix(_root_of(home) if home else "/usr/local/cuda-<version>"),
        )
        return
    windows = (fx.str("system.os") or "").lower().startswith("win")
    for name, value in (("toolkit.cuda_home", fx.str("toolkit.cuda_home")), ("CUDA_HOME", fx.env("CUDA_HOME"))):
        why = malformed_reason(value, windows) if value else None
        if why and value:
            yield CUDA_HOME_MALFORMED.finding(
                title=f"CUDA_HOME is not one toolkit directory: {why}",
                evidence={name: value},
                fix=_fix(_root_of(value)),
                severity="warning",  # nothing is being built in this run: the next extension build will fail
            )
            return


_ARCH_VAR = re.compile(r"in the (\w+_CUDA_ARCHITECTURES)")


@check(BUILD_WITHOUT_GPU_ARCH)
def build_without_gpu_arch(fx: Facts) -> Iterator[Finding]:
    """The build log says the build had no GPU to read its target architecture from, and no list was set."""
    said = error_match(fx, BUILD_WITHOUT_GPU_ARCH)
    if not said:
        return
    caps = sorted({g["capability"] for g in gpus(fx) if g.get("capability")}, key=lambda c: tuple(int(x) for x in c.split(".")))
    arch = ";".join(caps[:-1] + [caps[-1] + "+PTX"]) if caps else "<compute capability, e.g. 8.6>"
    where = f" (the GPUs the facts name: {', '.join(caps)})" if caps else ""
    var = _ARCH_VAR.search(said[1])
    cmds: List[str] = [
        'python -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"  # where the build runs: '
        "False / 0 means it sees no GPU",
        "nvidia-smi --query-gpu=name,compute_cap --format=csv  # on the machine the extension will run on",
        f'export TORCH_CUDA_ARCH_LIST="{arch}"  # the architectures to compile for{where}',
    ]
    if var:
        num = ",".join(c.replace(".", "") for c in caps) if caps else "<e.g. 86>"
        cmds.append(f"export {var.group(1)}={num}  # this project reads its own variable")
    cmds += [
        f'# in a Dockerfile: ENV TORCH_CUDA_ARCH_LIST="{arch}" before the RUN that builds (docker build has no GPU)',
        "rm -rf build/ && python -m pip install --no-build-isolation -v .  # rebuild",
    ]
    yield BUILD_WITHOUT_GPU_ARCH.finding(
        title="The extension build saw no GPU to take the target architecture from, and no architecture list was set",
        evidence={said[0]: said[1], **({"GPUs in the facts": ", ".join(caps)} if caps else {})},
        fix=Fix(
            tuple(cmds),
            "With no list given, the build compiles for the GPUs torch sees; while building it saw none. If this machine "
            "has a GPU torch should see, fix that first (run `cudadoctor check` there).",
        ),
    )


@check(CONDA_CUDATOOLKIT_MISSING)
def conda_cudatoolkit_missing(fx: Facts) -> Iterator[Finding]:
    """`import torch` cannot load a CUDA library, in a conda environment (its text or its facts say so)."""
    said = error_match(fx, CONDA_CUDATOOLKIT_MISSING)
    if not said:
        return
    conda = _CONDA_PATH.search(fx.user_error() or "") or _CONDA_PATH.search(said[1])
    if not conda and fx.str("pasted.conda.text"):
        conda = _CONDA_PATH.search(fx.str("pasted.conda.text") or "")
    if not conda and not in_conda_env(fx):
        return  # a pip torch brings its own CUDA libraries: another cause (cuda-library-missing, a broken install)
    m = _LIB_VERSION.search(said[1])
    lib, ver = (m.group(1), m.group(2)) if m else ("cudart", "<X.Y>")
    toolkit = ver if (m and lib == "cudart" and "." in ver) else "<the CUDA in pytorch's build string>"
    cmds = [
        "conda list | grep -i -E '^(pytorch|cudatoolkit) '  # pytorch's build string names the CUDA it links against",
        f"ls $CONDA_PREFIX/lib/lib{lib}.so*  # what the environment has",
        f"conda install cudatoolkit={toolkit}  # in the same environment",
        "# or reinstall both together: conda install pytorch torchvision cudatoolkit=<X.Y> -c pytorch",
    ]
    yield CONDA_CUDATOOLKIT_MISSING.finding(
        title=f"torch (a conda build) cannot load lib{lib}.so.{ver}: the environment lacks the cudatoolkit it links against",
        evidence={said[0]: said[1], **({"conda environment": conda.group(0)} if conda else {"conda environment": "the facts"})},
        fix=Fix(tuple(cmds), "conda's pytorch packages link against the cudatoolkit package of their environment."),
    )


@check(SUDO_RESETS_PATH)
def sudo_resets_path(fx: Facts) -> Iterator[Finding]:
    """A command run under sudo and nvcc not found by name: sudo's secure_path."""
    said = error_match(fx, SUDO_RESETS_PATH)
    if not said:
        yield from _nvcc_lost_on_the_way(fx)
        return
    cmds = [
        "which nvcc  # found in your own shell",
        "sudo sh -c 'echo $PATH; which nvcc'  # not found under sudo: its secure_path has no CUDA bin directory",
        "# build without sudo: python -m pip install --user . (or inside a virtual environment)",
        'sudo env "PATH=$PATH" "CUDA_HOME=$CUDA_HOME" "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" <the same command>  # or pass it on',
    ]
    yield SUDO_RESETS_PATH.finding(
        title="The command ran under sudo, whose reset PATH has no nvcc (it is only on your own PATH)",
        evidence={said[0]: said[1]},
        fix=Fix(tuple(cmds), "sudo sets PATH to /etc/sudoers' secure_path; the CUDA directories your shell adds are gone."),
    )


#: nvcc called by its bare name and not found by a shell, make or Python's spawn (not a path: a malformed or wrong
#: CUDA_HOME shows as '.../bin/nvcc: not found', cuda-home-malformed / cuda-home-not-set).
_NVCC_NOT_FOUND = r"(?:^|[\s:'\"])nvcc: (?:command )?not found|unable to execute '?nvcc'?: No such file"
#: nvcc works for the user: `nvcc --version` output, or a shell profile putting a CUDA bin directory on PATH.
_NVCC_WORKS = r"Cuda compilation tools, release \d+\.\d+|export PATH=[^\n]*cuda[^\n]*/bin"


def _nvcc_lost_on_the_way(fx: Facts) -> Iterator[Finding]:
    """A build's `nvcc: not found` while the same report shows nvcc working for the user (collect_env's "CUDA runtime
    version" is what `nvcc --version` printed; `nvcc --version` output; ~/.bashrc adding CUDA's bin to PATH): the build
    ran with another PATH than the user's shell. sudo's secure_path is the common cause (the text does not show the
    command line): a warning naming what confirms it."""
    lost = search(fx, _NVCC_NOT_FOUND)
    if not lost:
        return
    works = search(fx, _NVCC_WORKS)
    version = fx.str("toolkit.nvcc_version")
    if not works and not version:
        return
    yield SUDO_RESETS_PATH.finding(
        title="Likely: the build ran with another PATH than your shell (most often under sudo, whose secure_path has no "
        "CUDA bin directory): nvcc works for you but the build cannot find it",
        evidence={
            lost[0]: lost[1],
            "nvcc for the user": works[1] if works else None,
            "toolkit.nvcc_version": version,
        },
        fix=Fix(
            (
                "which nvcc  # found in your own shell",
                "sudo sh -c 'echo $PATH; which nvcc'  # not found under sudo: its secure_path has no CUDA bin directory",
                "# run the build as yourself (no sudo), in a virtual environment or with pip install --user",
                'sudo env "PATH=$PATH" "CUDA_HOME=$CUDA_HOME" <the same command>  # if it must run as root',
                "# not sudo? an IDE, cron or a service starts without ~/.bashrc: give it PATH=/usr/local/cuda/bin:$PATH",
            ),
            "The build's environment lacks the CUDA bin directory your shell's PATH has.",
        ),
        severity="warning",
    )


#: AutoGPTQ's own warning (auto_gptq/nn_modules/qlinear/qlinear_cuda*.py) when its compiled kernels do not import.
_AUTOGPTQ = re.compile(r"CUDA extension not installed|CUDA kernels for auto_gptq are not installed", re.I)
#: The kernels exist but do not load into this torch: the symbol/loader words of a build for another torch.
_LOADS_BUT_NOT_HERE = r"undefined symbol|DLL load failed|procedure entry point|cannot open shared object file|was built for"


def _autogptq_kernels(fx: Facts, said: Tuple[str, str]) -> Iterator[Finding]:
    """AutoGPTQ says its CUDA kernels are not installed (task build10): it prints this whenever importing
    autogptq_cuda_64/_256 fails. With a loader error in the text the kernels exist but were built for another torch
    (extension-abi-mismatch answers); without one they were never built (a wheel without them, BUILD_CUDA_EXT=0, or a
    source build where nvcc/CUDA_HOME was missing)."""
    if search(fx, _LOADS_BUT_NOT_HERE):
        return
    cmds = (
        'python -c "import torch; print(torch.__version__, torch.version.cuda)"  # the torch the kernels must be built for',
        'python -c "import torch, autogptq_cuda_64"  # the real import error, if the module is there',
        "pip uninstall -y auto-gptq",
        "pip install auto-gptq --no-build-isolation --no-cache-dir  # with nvcc of torch's CUDA on PATH (BUILD_CUDA_EXT=1), "
        "or the project's prebuilt wheel for this torch and CUDA",
    )
    yield EXTENSION_BUILT_WITHOUT_CUDA.finding(
        title="AutoGPTQ's CUDA kernels are not installed: this auto-gptq was built without them (or for another torch)",
        evidence={said[0]: said[1]},
        severity="warning",  # quantized layers still run, slowly (or through triton/exllama)
        fix=Fix(
            cmds,
            "AutoGPTQ compiles autogptq_cuda_* only when nvcc and a CUDA torch are present at build time; its wheels "
            "exist per torch/CUDA pair.",
        ),
    )


#: BasicSR's compiled ops (fused_act, upfirdn2d, dcn) absent: pip's basicsr is built without them unless BASICSR_EXT=True
#: (kb/errors/b23.json; session 23, b168-05: GFPGAN).
_BASICSR_OPS = re.compile(r"\b(?:fused_act|upfirdn2d|deform_conv)_ext\b")


def _basicsr_ops(said: Tuple[str, str]) -> Finding:
    return EXTENSION_BUILT_WITHOUT_CUDA.finding(
        title="BasicSR was installed without its compiled CUDA ops (fused_act / upfirdn2d / dcn): build them at run time "
        "(BASICSR_JIT=True) or reinstall with BASICSR_EXT=True",
        evidence={said[0]: said[1]},
        fix=Fix(
            (
                "export BASICSR_JIT=True  # Windows: set BASICSR_JIT=True; the ops are compiled on first use (needs nvcc / CUDA_HOME)",
                f"{PIP} uninstall -y basicsr && BASICSR_EXT=True {PIP} install --no-build-isolation --no-cache-dir basicsr  "
                "# or, in a clone: BASICSR_EXT=True python setup.py develop (not both)",
                "# dcn only: with torch >= 1.8 BasicSR uses torchvision's deform_conv2d and needs no compiled op",
            ),
            "pip's basicsr skips its CUDA ops unless BASICSR_EXT=True is set when it is built; the code that needs them then "
            "fails with NameError.",
        ),
    )


@check(EXTENSION_BUILT_WITHOUT_CUDA)
def extension_built_without_cuda(fx: Facts) -> Iterator[Finding]:
    """An extension says it was not compiled with GPU/CUDA support."""
    said = error_match(fx, EXTENSION_BUILT_WITHOUT_CUDA)
    if not said:
        return
    if _AUTOGPTQ.search(said[1]):
        yield from _autogptq_kernels(fx, said)
        return
    if _BASICSR_OPS.search(said[1]):
        yield _basicsr_ops(said)
        return
    cmds = [
        "python -c 'import torch; from torch.utils.cpp_extension import CUDA_HOME; print(torch.cuda.is_available(), "
        "CUDA_HOME)'  # where it is built: True and a toolkit directory",
        "# a prebuilt wheel for your torch and CUDA, where the project publishes one (torch-scatter & co: -f "
        "https://data.pyg.org/whl/torch-<X.Y.Z>+cu<NNN>.html)",
        "FORCE_CUDA=1 python -m pip install --no-build-isolation --no-cache-dir --force-reinstall <package>  # or rebuild "
        "with its CUDA code forced",
        "# a source checkout: rm -rf build/ first; in a Dockerfile: ENV FORCE_CUDA=1 TORCH_CUDA_ARCH_LIST=<arch list>",
    ]
    yield EXTENSION_BUILT_WITHOUT_CUDA.finding(
        title="The extension was built without its CUDA code: rebuild it where CUDA is found (FORCE_CUDA=1) or install its CUDA wheel",
        evidence={said[0]: said[1]},
        fix=Fix(tuple(cmds), "Its setup.py compiled the CUDA kernels only if it found CUDA at build time; it did not."),
    )


#: gcc's own version line and a gcc version written in the text ("gcc (GCC) 13.2.1 20230801", "gcc (Ubuntu
#: 13.2.0-23ubuntu4) 13.2.0", "gcc version 13.2.0", "with gcc 13.2", "I'm using GCC 14"); never "gcc-12"/"g++-12"
#: (a compiler named by its versioned name is often the one switched TO).
_GCC_STATED = re.compile(
    r"\bgcc(?:[ \t]+\([^()\n]{1,40}\)|[ \t]+version)?(?:[ \t]+is)?[ \t]+(\d{1,2})(?:\.\d+){0,2}(?![\w.-])", re.IGNORECASE
)
#: The text says a compile/build failed ("Compile error", "build log error", "failed to build", "compilation
#: terminated", "Unable to build", "error: command '/usr/local/cuda/bin/nvcc' failed"): the situation in which nvcc checks its host
#: compiler. Without it a gcc newer than nvcc accepts is no finding (nothing may be compiled with nvcc).
_BUILD_FAILED = re.compile(
    r"\b(?:compil\w*|build(?:ing)?)\b[^\n]{0,30}?\b(?:error|fail\w*)\b"
    r"|\b(?:error|fail\w*)\b[^\n]{0,12}?\b(?:to[ \t]+)?(?:compil\w*|build(?:ing)?)\b"
    r"|\b(?:unable to|cannot|can't|could not|couldn't)[ \t]+(?:build|compile)\b"
    r"|\bcompilation terminated\b|\berror: command '[^'\n]*nvcc[^'\n]*' failed",
    re.IGNORECASE,
)


def _gcc_majors(fx: Facts, text: str) -> List[int]:
    majors = {int(m.group(1)) for m in _GCC_STATED.finditer(text)}
    prose = re.match(r"(\d{1,2})\.", fx.str("pasted.prose.gcc.value") or "")
    if prose:
        majors.add(int(prose.group(1)))
    return sorted(majors)


def host_compiler_stated(fx: Facts, code: Code) -> Iterator[Finding]:
    """host-compiler-unsupported (``code``, declared by text_classes, which calls this when nvcc's own refusal is
    not quoted): a failed build whose text states a gcc newer than its CUDA toolkit's nvcc accepts
    (kb/host_compilers.json, from each release's crt/host_config.h)."""
    text = fx.str("user_error.text") or ""
    cuda = fx.str("toolkit.nvcc_version") or ""
    limits = kb.host_compiler_limits(cuda) if cuda else None
    failed = _BUILD_FAILED.search(text)
    majors = _gcc_majors(fx, text)
    if not (limits and limits.get("gcc_max") and failed and majors):
        return
    top = int(limits["gcc_max"])
    if min(majors) <= top:  # a stated gcc nvcc accepts: which one built is unknown
        return
    gcc = fx.str("pasted.prose.gcc.text") or f"gcc {majors[0]}"
    newer = kb.cuda_accepting_gcc(majors[0])
    cmds = [
        "gcc --version; nvcc --version  # the host compiler nvcc runs, and the toolkit",
        f"export CC=gcc-{top} CXX=g++-{top} NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-{top}'  # a gcc nvcc {cuda} accepts; "
        f"or the project's own option (--cxx=g++-{top}, -DCMAKE_CUDA_HOST_COMPILER=g++-{top})",
        f"# then rebuild; or install CUDA {newer} or newer (its nvcc accepts gcc {majors[0]})"
        if newer
        else "# then rebuild; or install a newer CUDA toolkit that supports your gcc",
    ]
    yield code.finding(
        title=f"The build failed with gcc {majors[0]}, newer than the gcc {top} nvcc of CUDA {cuda} accepts",
        evidence={
            "gcc": gcc,
            "cuda toolkit": f"{cuda} ({fx.str('toolkit.from') or 'toolkit.nvcc_version'})",
            "nvcc accepts": f"gcc {top} at most (crt/host_config.h of CUDA {limits.get('release') or cuda})",
            "build failure": failed.group(0),
        },
        fix=Fix(
            tuple(cmds),
            "nvcc checks the host compiler's version (crt/host_config.h) and refuses a gcc newer than its release supports.",
        ),
        severity="warning",
    )


def register():
    return [
        cuda_home_malformed,
        build_without_gpu_arch,
        conda_cudatoolkit_missing,
        sudo_resets_path,
        extension_built_without_cuda,
    ]
