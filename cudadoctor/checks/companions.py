"""Do the packages around torch fit it: torchvision/torchaudio, NumPy, and which torch is imported?

Codes: torchvision-mismatch, numpy-abi-mismatch, multiple-torch-installs.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudadoctor import kb as _kb_tables
from cudadoctor.errortext import TENSORFLOW_VERSION
from cudadoctor.facts import Facts, normalize_name
from cudadoctor.interpret import (
    cuda_of_variant,
    driver_os,
    driver_version,
    environment,
    in_conda_env,
    is_wsl,
    mm,
    mm_str,
    nvidia_gpu_present,
    os_key,
    release_of,
    torch_cuda,
    torch_release,
    torch_version,
    variant,
    variant_of_tag,
    vtuple,
)
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match, kb, search, text_of
from ._fixes import companion_fix, install_commands, newest_runnable

TORCHVISION_MISMATCH = Code(
    code="torchvision-mismatch",
    title="torchvision/torchaudio does not match the installed torch",
    area="packages",
    severity="error",
    explanation={
        "what": "torchvision (or torchaudio) is not the release paired with the installed torch, or "
        "was built for another CUDA variant (another CUDA version, or CUDA vs CPU).",
        "why": "Their compiled operators link against one exact torch release and CUDA variant. A "
        'mismatched pair fails at import or first use: "operator torchvision::nms does not exist", '
        '"Detected that PyTorch and torchvision were compiled with different CUDA major versions", '
        "an undefined symbol in torchvision/_C.so, or a missing libc10_cuda.so when a CUDA "
        "torchvision meets a CPU torch. It typically happens when `pip install torchvision` pulls "
        "the default PyPI build next to a torch from another index, or upgrades only one of them.",
        "confirm": '`python -c "import torch, torchvision; print(torch.__version__, torchvision.__version__)"` '
        "and compare with the pairing table at https://github.com/pytorch/vision#installation; the "
        "`+cuXXX`/`+cpu` suffixes must agree.",
        "fix": "Reinstall the companion paired with your torch from the same wheel index as torch "
        "(the finding gives the exact command, with --no-deps so torch stays as it is).",
    },
    links=(
        "https://github.com/pytorch/vision#installation",
        "https://pytorch.org/get-started/previous-versions/",
        "https://pytorch.org/audio/main/installation.html#compatibility-matrix",
    ),
)

NUMPY_ABI_MISMATCH = Code(
    code="numpy-abi-mismatch",
    title="NumPy's major version does not match the one torch was built against",
    area="packages",
    severity="error",
    explanation={
        "what": "NumPy 2 is installed with a torch built against NumPy 1 (torch releases before "
        "2.3), or a package built against NumPy 2 runs with NumPy 1.",
        "why": "NumPy 2 changed its C ABI. Extensions compiled against NumPy 1 cannot use NumPy 2: "
        'importing torch prints "A module that was compiled using NumPy 1.x cannot be run in NumPy '
        '2.0.0 as it may crash", then "Failed to initialize NumPy: _ARRAY_API not found", and '
        'torch.from_numpy()/tensor.numpy() fail with "Numpy is not available". torch 2.3 and later '
        "are built against NumPy 2 and work with both.",
        "confirm": '`python -c "import numpy, torch; print(numpy.__version__, torch.__version__); '
        'torch.from_numpy(numpy.zeros(1))"`.',
        "fix": 'Pin NumPy below 2 (`pip install "numpy<2"`) for torch older than 2.3, or upgrade '
        "torch to 2.3 or later (newest variant your driver runs).",
    },
    links=(
        "https://numpy.org/devdocs/dev/depending_on_numpy.html#numpy-2-abi-handling",
        "https://github.com/pytorch/pytorch/issues/107302",
    ),
)

MULTIPLE_TORCH_INSTALLS = Code(
    code="multiple-torch-installs",
    title="More than one torch is installed where Python looks, and not the one you installed is imported",
    area="torch",
    severity="warning",
    explanation={
        "what": "Two or more torch installations are visible to this interpreter — the user site "
        "(~/.local) and the environment, pip and conda in one env, a leftover source build "
        "(`python setup.py develop`), another env's site-packages on PYTHONPATH — and `import "
        "torch` picks one that differs from the one you installed.",
        "why": "Python imports the first torch on sys.path. Upgrading or reinstalling changes "
        "another copy, so the version `import torch` prints differs from `pip show torch`, fixes "
        'seem to have no effect, and companions built for the other copy fail ("operator '
        'torchvision::nms does not exist").',
        "confirm": '`python -c "import torch; print(torch.__version__, torch.__file__)"` against '
        "`python -m pip show torch` (Location) and `python -m pip list -v | grep -i torch`; "
        '`python -c "import sys; print(sys.path)"`; `echo $PYTHONPATH`.',
        "fix": "Uninstall every copy but the one you want (repeat `python -m pip uninstall torch` "
        "until it says it is not installed; `conda remove pytorch`; remove the stray directory the "
        "finding names), unset PYTHONPATH if it points into another environment, then reinstall once.",
    },
    links=("https://docs.python.org/3/library/site.html", "https://pip.pypa.io/en/stable/user_guide/#user-installs"),
)


def _s(v: Any) -> Optional[str]:
    return v if isinstance(v, str) and v else None


def _tag(version: Any) -> Optional[str]:
    t = variant_of_tag(version)
    return t if t != "xpu" else None


def _companion_variant(info: Dict[str, Any], dist_version: Optional[str]) -> Optional[str]:
    """The CUDA variant a companion was built for: its +tag, else torchvision's _cuda_version() op."""
    t = _tag(info.get("version")) or _tag(dist_version)
    if t:
        return t
    op = info.get("cuda_version_op")
    if isinstance(op, int) and not isinstance(op, bool):
        if op == -1 or op == 0:
            return "cpu"
        return f"cu{op // 1000}{(op % 1000) // 10}"
    loader = str(info.get("loader_error") or "") + str(info.get("extension_error") or "")
    if re.search(r"lib(c10_cuda|torch_cuda|cudart)\.so", loader):
        return "cuda"  # a CUDA build: it needs torch's CUDA libraries
    return None


def _variant_kind(v: Optional[str]) -> Optional[str]:
    if not v:
        return None
    return "cuda" if v.startswith("cu") else v


def _pairing_problems(
    name: str, crel: Optional[str], trel: Optional[str], prerelease: bool, evidence: Dict[str, Any]
) -> List[str]:
    """Is the companion's release the one paired with torch's? (Nightlies and source builds pair by date.)"""
    if not (crel and trel) or prerelease:
        return []
    if name == "torchaudio":
        want_a = (kb().torch_release(trel) or {}).get("torchaudio")
        if want_a and mm(want_a) != mm(crel):
            return [f"torchaudio {crel} is not the release paired with torch {trel} (that is {want_a})"]
        return []
    paired = kb().torch_for_torchvision(crel)
    if paired and mm(paired) != mm(trel):
        evidence[f"{name}.pairs_with_torch"] = paired
        return [f"{name} {crel} belongs to torch {mm_str(paired)}, but torch {trel} is installed"]
    return []


def _variant_problems(name: str, cvar: Optional[str], tvar: Optional[str]) -> List[str]:
    """Are the companion and torch built for the same kind of GPU (and the same CUDA)?"""
    if not (cvar and tvar):
        return []
    tk, ck = _variant_kind(tvar), _variant_kind(cvar)
    if tk != ck:
        return [
            f"{name} is a {'CUDA' if ck == 'cuda' else str(ck).upper()} build ({cvar}) but torch is a "
            f"{'CUDA' if tk == 'cuda' else str(tk).upper()} build ({tvar})"
        ]
    a, b = mm(cuda_of_variant(cvar)), mm(cuda_of_variant(tvar))
    if tk == "cuda" and cvar != tvar and a and b:
        return [
            f"{name} is built for CUDA {a[0]}.{a[1]}, torch for CUDA {b[0]}.{b[1]}"
            + ("" if a[0] != b[0] else " (minor versions differ)")
        ]
    return []


def _said_problems(name: str, txt: Tuple[str, str], problems: List[str]) -> Optional[str]:
    """What the user's error text says about the companion; the torch variant it names, if any."""
    tvar = None
    m = re.search(r"PyTorch has CUDA Version=(\d+\.\d+) and \w+ has CUDA Version=(\d+\.\d+)", txt[1])
    if m and not problems:
        problems.append(f"{name} is built for CUDA {m.group(2)}, torch for CUDA {m.group(1)}")
        tvar = "cu" + m.group(1).replace(".", "")
    if not problems:
        problems.append(f"{name} does not fit the installed torch ({txt[1][:160]})")
    return tvar


def _severity(problems: List[str], loaded: Any, said: bool) -> str:
    only_minor = all("minor versions differ" in p for p in problems)
    if only_minor or (loaded is True and not said and not any("CPU" in p for p in problems)):
        return "warning"
    if loaded is True and any("build (cpu)" in p for p in problems):
        return "warning"  # a CPU companion beside a CUDA torch imports; only its GPU ops are missing
    return "error"


# ---------------------------------------------------------------- companion-cpu-only-build: which package's CPU build

#: (package, how texts name it, the commands that put its CUDA build in place): the libraries with separate CPU and
#: CUDA builds whose own words say they run without CUDA (kb/errors/packaging.json, ext4.json). Order: the most
#: specific wording first; the first whose name the text holds wins.
_CPU_BUILDS: Tuple[Tuple[str, str, Tuple[str, ...]], ...] = (
    (
        # torchvision's ops register their CUDA kernels only in its CUDA builds; PyTorch's dispatcher then lists the
        # backends it has ('only available for these backends: [CPU, ...]', kb/errors/lib11.json)
        "torchvision",
        r"torchvision::",
        (
            'python -c "import torch, torchvision; print(torch.__version__, torchvision.__version__)"  # +cpu on torchvision: its CPU build',
            f"{PIP} uninstall -y torchvision",
            f"{PIP} install torchvision --index-url https://download.pytorch.org/whl/cu<XYZ>  # the release paired with your torch, same CUDA variant as torch",
        ),
    ),
    (
        "dlib",
        r"\bdlib\b|face_recognition",
        (
            'python -c "import dlib; print(dlib.DLIB_USE_CUDA, dlib.cuda.get_num_devices())"  # False: a CPU build',
            f"{PIP} uninstall -y dlib",
            "# the CUDA toolkit (nvcc) and cuDNN must be installed and found: dlib's build prints 'DLIB WILL NOT USE CUDA' otherwise",
            f"{PIP} install --no-cache-dir --no-binary dlib -v dlib  # rebuild; check the log says it uses CUDA",
        ),
    ),
    (
        # faiss's GPU classes exist only in the GPU build's module (faiss wiki, Troubleshooting: "No GPU Faiss");
        # faiss-cpu and faiss-gpu both install the module faiss (kb/errors/lib9.json)
        "faiss",
        r"\bfaiss\b|StandardGpuResources|GpuIndex",
        (
            "python -c \"import faiss; print(hasattr(faiss, 'StandardGpuResources'))\"  # False: the CPU build is imported",
            f"{PIP} uninstall -y faiss-cpu faiss-gpu  # both install the module faiss; the one installed last wins",
            "conda install -c pytorch -c nvidia faiss-gpu  # the GPU build (pip: faiss-gpu-cu12 / faiss-gpu-cu11 for your CUDA major)",
        ),
    ),
    (
        # decord's pip wheels are built without CUDA (a maintainer, dmlc/decord#71): gpu(0) contexts need a source build
        # with -DUSE_CUDA=ON and NVIDIA's video codec SDK (the README's "Install from source")
        "decord",
        r"\bdecord\b|Requested context GPU",
        (
            "python -c \"import decord; decord.VideoReader('video.mp4', ctx=decord.gpu(0))\"  # 'CUDA not enabled': a CPU build",
            f"{PIP} uninstall -y decord",
            "# build decord from source with NVDEC: cmake .. -DUSE_CUDA=ON -DCMAKE_BUILD_TYPE=Release (README: Install from source)",
        ),
    ),
    (
        # torchcodec's PyPI wheels are its CPU builds; CUDA decoding needs the wheel from PyTorch's index for torch's
        # CUDA variant (meta-pytorch/torchcodec#442; the README's install section)
        "torchcodec",
        r"torchcodec|VideoDecoder\(",
        (
            f"{PIP} uninstall -y torchcodec",
            f"{PIP} install torchcodec --index-url https://download.pytorch.org/whl/cu<XYZ>  # the CUDA build, same CUDA variant as torch",
        ),
    ),
    (
        # OpenCV's PyPI wheels (opencv-python, -contrib) and most packaged builds have no CUDA: its CUDA modules and the
        # DNN module's CUDA backend exist only in a source build with WITH_CUDA=ON (opencv/opencv-python#398, a maintainer;
        # b172: "(-216:No CUDA support) The library is compiled without CUDA support", GetCudaEnabledDeviceCount() = 0)
        "OpenCV",
        r"\bopencv|\bcv2\b|CudaEnabledDeviceCount|No CUDA support|DNN module was not built with CUDA",
        (
            'python -c "import cv2; print(cv2.cuda.getCudaEnabledDeviceCount()); print(cv2.getBuildInformation())"  # 0, and NVIDIA CUDA: NO',
            f"{PIP} uninstall -y opencv-python opencv-contrib-python opencv-python-headless  # the PyPI wheels have no CUDA",
            "# build OpenCV with opencv_contrib: cmake -D WITH_CUDA=ON -D OPENCV_DNN_CUDA=ON -D WITH_CUDNN=ON "
            "-D CUDA_ARCH_BIN=<your GPU's compute capability> -D OPENCV_EXTRA_MODULES_PATH=../opencv_contrib/modules ..",
        ),
    ),
    (
        "DGL",
        r"\bdgl\b",
        (
            f"{PIP} uninstall -y dgl",
            f"{PIP} install dgl -f https://data.dgl.ai/wheels/torch-<torch major.minor>/cu<XYZ>/repo.html  # the CUDA build for your torch and CUDA",
        ),
    ),
    (
        "onnxruntime",
        r"onnx|ExecutionProvider|execution[-_ ]providers?",
        (
            f"{PIP} uninstall -y onnxruntime onnxruntime-gpu  # both install the module onnxruntime; the CPU one shadows the GPU one",
            f"{PIP} install onnxruntime-gpu  # the build for your CUDA: see onnxruntime.ai's CUDA execution provider requirements",
            'python -c "import onnxruntime as o; print(o.get_available_providers())"  # lists CUDAExecutionProvider',
        ),
    ),
    (
        "bitsandbytes",
        r"bitsandbytes|CUDA Setup failed despite",
        (
            "python -m bitsandbytes  # which binary it loads (libbitsandbytes_cpu means no CUDA build was found)",
            f"{PIP} install -U bitsandbytes  # 0.43+ ships CUDA builds for Linux and Windows and finds torch's CUDA runtime",
        ),
    ),
    (
        "llama-cpp-python",
        r"llama|gpu[ -]layers|GPU offload",
        (
            f'CMAKE_ARGS="-DGGML_CUDA=on" {PIP} install --force-reinstall --no-cache-dir llama-cpp-python  # build it with CUDA (older releases: -DLLAMA_CUBLAS=on)',
        ),
    ),
    (
        "implicit",
        r"\bimplicit[./\\](?:gpu|cpu|als)\b|\bimplicit[-_]proc\b|No CUDA extension has been built, can't train on GPU",
        (
            'python -c "import implicit.gpu; print(implicit.gpu.HAS_CUDA)"  # False: this build has no CUDA extension',
            "conda install -c conda-forge implicit implicit-proc=*=gpu  # the GPU build (implicit#699, #438)",
        ),
    ),
    (
        "COLMAP",
        r"colmap|patch match stereo|dense (?:stereo )?reconstruction",
        (
            "colmap -h | head -2  # the banner says 'with CUDA' or 'without CUDA'",
            "# Windows: the release's windows-cuda zip; Linux: build it with CUDA (cmake -DCUDA_ENABLED=ON, a CUDA "
            "toolkit installed); macOS has no CUDA: dense reconstruction needs a machine with an NVIDIA GPU",
        ),
    ),
    (
        # conda-forge's CPU xgboost (or an environment pinning it) has no GPU code; the pip wheel has (dmlc/xgboost#7765)
        "XGBoost",
        r"xgboost",
        (
            "python -c \"import xgboost; print(xgboost.build_info().get('USE_CUDA'))\"  # False: a CPU build",
            f"{PIP} uninstall -y xgboost && {PIP} install xgboost  # PyPI's Linux x86_64 and Windows wheels are built "
            "with CUDA (not xgboost-cpu, not a conda CPU build)",
        ),
    ),
    (
        # LightGBM's builds leave the GPU (OpenCL) and CUDA tree learners out unless built with -DUSE_GPU=1 / -DUSE_CUDA=1
        # (its own Fatal line; LightGBM#2222, #3696)
        "LightGBM",
        r"lightgbm|Tree Learner was not enabled",
        (
            f"{PIP} uninstall -y lightgbm",
            f"{PIP} install lightgbm --no-binary lightgbm --config-settings=cmake.define.USE_CUDA=ON  # a build with the "
            "CUDA tree learner (device_type='cuda'; needs the CUDA toolkit), or USE_GPU=ON for the OpenCL one (device='gpu')",
        ),
    ),
    (
        # SCS's pip/conda builds carry no GPU solver; _scs_gpu exists only in a source build with its GPU option
        # (scs-python#2, cvxpy#902: the maintainers)
        "SCS",
        r"_scs_gpu|\bscs\b",
        (
            'python -c "import _scs_gpu"  # ModuleNotFoundError: this SCS has no GPU solver',
            "# build SCS from source with its GPU option (SCS's installation docs), with a CUDA toolkit installed; or solve "
            "with gpu=False",
        ),
    ),
    (
        "jaxlib",
        r"jax|xla|registered platform|GPU/TPU",
        (
            f"{PIP} uninstall -y jax jaxlib",
            f'{PIP} install -U "jax[cuda12]"  # the CUDA 12 build (jax[cuda13] for CUDA 13)',
            'python -c "import jax; print(jax.devices())"  # lists CudaDevice',
        ),
    ),
)


#: A companion-cpu-only-build match that only says the GPU stays idle (ext6.json): a reasoned warning, not a report.
_IDLE_ONLY = re.compile(
    r"no (?:performance|speed) difference|no (?:activity|load|usage|utili[sz]ation) on|gpu (?:usage|utili[sz]ation|load|activity)|(?:same|similar) speed|not (?:any )?faster",
    re.I,
)


def cpu_build_severity(line: str) -> Optional[str]:
    """'warning' when the matched line only shows an idle GPU beside the package (no build says it lacks CUDA)."""
    return (
        "warning"
        if _IDLE_ONLY.search(line) and not re.search(r"False|WILL NOT USE CUDA|without (?:GPU|CUDA)", line, re.I)
        else None
    )


def names_cpu_build_companion(text: str) -> bool:
    """Whether the text names a library that has separate CPU and CUDA builds (by the names cpu_build_of reads): a
    companion-cpu-only-build cause needs that library in evidence; a text naming none (a bare cuBLAS status) is no
    report of one."""
    return any(re.search(rx, text, re.IGNORECASE) for _name, rx, _cmds in _CPU_BUILDS)


def cpu_build_of(line: str, *contexts: str) -> Tuple[str, Tuple[str, ...]]:
    """(package, commands to install its CUDA build) for a companion-cpu-only-build match: named by the matched line,
    else by each context in turn (the rest of the text, the installed packages' names); jaxlib (the oldest such
    wording) when none names one."""
    for text in (line, *contexts):
        for name, rx, cmds in _CPU_BUILDS:
            if re.search(rx, text, re.IGNORECASE):
                return name, cmds
    return _CPU_BUILDS[-1][0], _CPU_BUILDS[-1][2]


# ---------------------------------------------------------------- companion-cpu-only-build: TensorFlow 2.11+ on native Windows

#: TensorFlow's install page: "TensorFlow 2.10 was the last TensorFlow release that supported GPU on native-Windows";
#: from 2.11 the Windows wheels are CPU builds (GPU: WSL2, or the DirectML plugin).
TF_WINDOWS_LAST_GPU = (2, 10)
TF_WINDOWS_DOCS = "https://www.tensorflow.org/install/pip#windows-native"
#: TensorFlow (or its user) saying it sees no GPU.
_TF_NO_GPU = re.compile(
    r"list_physical_devices\(\s*['\"]GPU['\"]\s*\)\W*(?:\[\s*\]|(?:returns?|gives?|is|shows?)\s+(?:an?\s+)?(?:empty|\[\s*\]|0|nothing))|"
    r"\bGPU is NOT AVAILABLE\b|Num GPUs(?: Available)?\W+0\b|Skipping registering GPU devices|\bgpus?\b[^\n]{0,40}?[:=]\s*\[\s*\]|"
    r"\[PhysicalDevice\(name='/physical_device:CPU:0',\s*device_type='CPU'\)\]|\breturns?\s+(?:an?\s+)?empty\s+(?:list|array)|"
    r"\b(?:can'?t|cannot|can not|doesn'?t|does not|didn'?t|did not|not|unable to|fails? to|failed to)\s+(?:\w+\s+){0,3}"
    r"(?:detect|find|see|recogni[sz]e|use|using|list)\w*\s+(?:\w+\s+){0,2}gpus?\b|"
    r"\bno gpus?\b|\bgpus?\s+(?:is\s+|are\s+)?not\s+(?:being\s+)?(?:found|detected|available|recogni[sz]ed|listed|used)",
    re.IGNORECASE,
)


def tensorflow_version(fx: Facts) -> Optional[Tuple[Tuple[int, int], str]]:
    """((major, minor), where) of TensorFlow: pip's listing (tensorflow, tensorflow-gpu, tensorflow-intel), else the
    text; tf-nightly counts as a release after 2.10. None when neither states one."""
    for dist in ("tensorflow", "tensorflow-gpu", "tensorflow-intel", "tensorflow-cpu", "tf-nightly"):
        d = fx.distribution(dist)
        if d and _s(d.get("version")):
            v = mm(str(d["version"]))
            if v:
                return v, f"packages: {d.get('name')} {d['version']}"
            if dist == "tf-nightly":
                return (99, 0), f"packages: {d.get('name')} {d['version']}"
    for d in fx.dicts("packages.stated"):  # a version the paste states in prose (readers/prose.py)
        v = mm(str(d.get("version") or "")) if normalize_name(str(d.get("name", ""))) == "tensorflow" else None
        if v:
            return v, str(d.get("from") or f"the text: tensorflow {d.get('version')}")
    best: Optional[Tuple[Tuple[int, int], str]] = None
    for m in TENSORFLOW_VERSION.finditer(fx.user_error()):
        if m.group("nightly"):
            return (99, 0), f"the text: {m.group(0)}"
        v = mm(m.group("v"))
        if v and (best is None or v > best[0]):  # the newest one named (a user trying several)
            best = (v, f"the text: {' '.join(m.group(0).split())}")
    return best


def tensorflow_windows_cpu_only(fx: Facts) -> Optional[Dict[str, str]]:
    """TensorFlow after 2.10 on native Windows (not WSL): its Windows wheels have no GPU support at all.
    {"tensorflow", "os", "no_gpu"} ("no_gpu": the text saying it finds no GPU, or None when the text says nothing of
    it: the finding is then a warning) or None."""
    if os_key(fx) != "windows" or is_wsl(fx):
        return None
    tf = tensorflow_version(fx)
    if not tf or tf[0] <= TF_WINDOWS_LAST_GPU:
        return None
    text = text_of(fx)
    said = _TF_NO_GPU.search(text)
    no_gpu = " ".join(said.group(0).split()) if said else None
    if not no_gpu and 'device_type: "CPU"' in text and 'device_type: "GPU"' not in text:
        no_gpu = 'device_lib.list_local_devices(): device_type "CPU" only'
    return {"tensorflow": tf[1], "os": fx.str("system.os") or "Windows", "no_gpu": no_gpu}  # type: ignore[dict-item]


# ---------------------------------------------------------------- companion-cpu-only-build: CPU and CUDA builds both installed

#: A text saying the GPU path of the package is missing (its own words or the user's): the twin is then the cause, not a
#: risk. onnxruntime lists its providers; Paddle and TensorFlow answer is_compiled_with_cuda / list_physical_devices.
_GPU_PATH_MISSING = re.compile(
    r"CUDAExecutionProvider'? is not in available provider|only \[?'?CPUExecutionProvider|"
    r"(?:cuda|gpu)\s+(?:execution\s+)?provider\s+(?:is\s+)?not\s+(?:being\s+)?(?:listed|available|showing|shown|found)|"
    r"is_compiled_with_cuda\(\)\W+False|not compiled with cuda|no gpu devices? (?:found|available)",
    re.IGNORECASE,
)
#: The words of a sentence that says what is installed (not what to do): "I had installed both X and X-gpu".
_INSTALLED_BOTH = re.compile(r"\bboth\b|\binstalled\b|\btogether\b|\balong\s+with\b|\bas well\b|\bbeside\b", re.I)
_ADVICE = re.compile(r"\buninstall|\bremov|\binstead\b|\bshould\b|\bdon'?t\b|\bdo not\b|\bonly one\b", re.I)


def _dist_rx(name: str) -> str:
    """A distribution name as a whole word: onnxruntime not followed by -gpu, pip's _ and - spellings alike."""
    return r"(?<![\w.-])" + re.escape(name).replace(r"\-", "[-_]") + r"(?![\w-])"


def _twin_in_text(text: str, cpu: str, gpus: List[str]) -> Optional[Tuple[str, str]]:
    """(gpu distribution, the text's line) where a text shows both distributions installed: pip-list rows of both, or
    one sentence naming both as installed (not advice to remove one)."""
    cpu_rx = _dist_rx(cpu)
    for gpu in gpus:
        gpu_rx = _dist_rx(gpu)
        row = r"^\s*(?:\[(?:pip\d?|conda)\]\s*)?{}\s*(?:==|\s)\s*v?\d+\.\d+"
        cpu_row = re.search(row.format(cpu_rx), text, re.I | re.M)
        gpu_row = re.search(row.format(gpu_rx), text, re.I | re.M)
        if cpu_row and gpu_row:
            return gpu, f"{cpu_row.group(0).strip()} / {gpu_row.group(0).strip()}"
        for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
            if (
                re.search(cpu_rx, sentence, re.I)
                and re.search(gpu_rx, sentence, re.I)
                and _INSTALLED_BOTH.search(sentence)
                and not _ADVICE.search(sentence)
            ):
                return gpu, sentence.strip()[:300]
    return None


def cpu_gpu_twins(fx: Facts) -> Optional[Dict[str, Any]]:
    """A module whose CPU-only and CUDA distributions are both installed (kb/cpu_gpu_twins.json): both write the same
    import name, so the CPU build's files can be the ones imported. From the package list, else from a text that says
    so. {"module", "cpu", "gpu", "where", "gpu_missing"} or None."""
    text = fx.user_error()
    for row in _kb_tables._load("cpu_gpu_twins")["modules"]:
        cpu, gpus = row["cpu"], list(row["gpu"])
        where = None
        d_cpu = fx.distribution(cpu)
        d_gpu = next((d for d in (fx.distribution(g) for g in gpus) if d), None)
        if d_cpu and d_gpu:
            if row.get("cpu_only_to") and (mm(_s(d_cpu.get("version")) or "") or (0, 0)) > (mm(row["cpu_only_to"]) or (0, 0)):
                continue  # a later CPU distribution is the full build: no CPU-only files to shadow anything
            gpu = str(d_gpu.get("name"))
            where = f"packages: {d_cpu.get('name')} {d_cpu.get('version') or ''} and {gpu} {d_gpu.get('version') or ''}"
        elif text and not row.get("cpu_only_to"):
            got = _twin_in_text(text, cpu, gpus)
            if got:
                gpu, where = got[0], f"the text: {got[1]}"
        if where:
            missing = _GPU_PATH_MISSING.search(text)
            return {
                "module": row["module"],
                "cpu": cpu,
                "gpu": gpu,
                "where": where.strip(),
                "gpu_missing": missing.group(0) if missing else None,
            }
    return None


#: The reporter's words for "it runs on the CPU, not the GPU" (kb/errors/torch-builds.json symptoms.runs_on_cpu).
def _runs_on_cpu(fx: Facts) -> Optional[str]:
    from cudadoctor.errortext import kb_document

    row = kb_document("torch-builds.json").get("symptoms", {}).get("runs_on_cpu") or {}
    m = re.search(str(row.get("regex") or r"(?!)"), fx.user_error() or "", re.I)
    return m.group(0) if m else None


def cpu_build_alone(fx: Facts) -> Optional[Dict[str, Any]]:
    """A package with separate CPU and CUDA distributions (kb/cpu_gpu_twins.json, the rows whose CPU distribution never
    had GPU code) installed only in its CPU build (package list or a `name==version` line of the text), no CUDA build
    named anywhere, and the reporter saying it runs on the CPU or the GPU path missing: {"module", "cpu", "gpu",
    "where", "symptom"} or None."""
    text = fx.user_error() or ""
    for row in _kb_tables._load("cpu_gpu_twins")["modules"]:
        if row.get("cpu_only_to"):
            continue  # a later CPU distribution is the full build (tensorflow after 1.15)
        cpu, gpus = row["cpu"], list(row["gpu"])
        if any(fx.distribution(g) or re.search(_dist_rx(g), text, re.I) for g in gpus):
            continue
        d_cpu = fx.distribution(cpu)
        line = re.search(r"^\s*(?:\[(?:pip\d?|conda)\]\s*)?" + _dist_rx(cpu) + r"\s*(?:==|\s)\s*v?\d+\.\d+\S*", text, re.I | re.M)
        where = f"packages: {cpu} {d_cpu.get('version') or ''}".strip() if d_cpu else (line.group(0).strip() if line else None)
        if not where:
            continue
        missing = _GPU_PATH_MISSING.search(text)
        symptom = (missing.group(0) if missing else None) or _runs_on_cpu(fx)
        if symptom:
            return {"module": row["module"], "cpu": cpu, "gpu": gpus[0], "where": where, "symptom": symptom}
    return None


@check(TORCHVISION_MISMATCH)
def torchvision_mismatch(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, TORCHVISION_MISMATCH)
    tver = torch_version(fx)
    trel = release_of(tver)
    tvar = variant(fx)
    for name in ("torchvision", "torchaudio"):
        info = fx.dict(f"torch.companions.{name}") or {}
        dist = fx.distribution(name)
        cver = _s(info.get("version")) or _s((dist or {}).get("version"))
        about_this = bool(said and (name == "torchvision") == ("torchaudio" not in said[1].lower()))
        if not cver and not about_this:
            continue  # nothing names this companion: no version, no text about it
        evidence: Dict[str, Any] = {"torch.version": tver, f"{name}.version": cver}
        prerelease = bool(re.search(r"(dev|a\d|b\d|rc\d|\+git|\+[0-9a-f]{7})", f"{cver or ''} {tver or ''}"))
        problems = _pairing_problems(name, release_of(cver), trel, prerelease, evidence)
        cvar = _companion_variant(info, (dist or {}).get("version"))
        problems += _variant_problems(name, cvar, tvar)
        if cvar and tvar:
            evidence[f"{name}.variant"] = cvar
            evidence["torch.variant"] = tvar
        loaded = info.get("extension_loaded")  # the live extension load
        if loaded is False:
            error = info.get("loader_error") or info.get("extension_error")
            evidence[f"{name}.extension_error"] = error
            if not problems:
                problems.append(f"{name}'s compiled operators do not load into this torch: {str(error or '')[:200]}")
        txt = said if about_this else None
        if txt:
            evidence[txt[0]] = txt[1]
            said_var = _said_problems(name, txt, problems)
            tvar = tvar or said_var
        if not problems:
            continue
        gpu_here = nvidia_gpu_present(fx) is True
        cmds, why = companion_fix(environment(fx), name, trel, tvar, cvar, driver_version(fx), gpu_here)
        yield TORCHVISION_MISMATCH.finding(
            title=f"{name}{(' ' + cver) if cver else ''} does not match torch{(' ' + tver) if tver else ''}: {problems[0]}",
            evidence=evidence,
            fix=Fix(tuple(cmds), why),
            severity=_severity(problems, loaded, bool(txt)),
        )
        if txt:
            said = None


# ---------------------------------------------------------------- numpy


@check(NUMPY_ABI_MISMATCH)
def numpy_abi_mismatch(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, NUMPY_ABI_MISMATCH)
    np_ver = _s((fx.distribution("numpy") or {}).get("version"))
    npt = vtuple(np_ver)
    trel = torch_release(fx)
    tt = vtuple(trel)
    facts_say = bool(npt and tt and npt[0] >= 2 and tt[:2] < (2, 3))
    if not (said or facts_say):
        return
    evidence = {"numpy.version": np_ver, "torch.version": torch_version(fx)}
    if said:
        evidence[said[0]] = said[1]
    conda_np = str((fx.distribution("numpy") or {}).get("installer") or "").lower() == "conda" and in_conda_env(fx)
    reverse = bool(npt and npt[0] < 2 and said and re.search(r"0x2000000|compiled using NumPy 2", said[1]))
    if reverse:
        cmds = [f'{PIP} install --upgrade "numpy>=2"  # the failing module was built against NumPy 2']
        why = "A package built against NumPy 2 needs NumPy 2 at run time."
    else:
        cmds = ['conda install "numpy<2"' if conda_np else f'{PIP} install "numpy<2"']
        why = f"torch {trel or ''} was built against NumPy 1; NumPy 1.26 is the last 1.x.".replace("  ", " ")
        if tt and tt[:2] < (2, 3):
            alt = newest_runnable(driver_version(fx), driver_os(fx), fx.str("python.version")) if driver_version(fx) else None
            if alt:
                cmds.append(
                    f"# or upgrade torch (2.3 and later work with NumPy 1 and 2): torch {alt[0]} {alt[1]} runs on driver {driver_version(fx)}"
                )
                cmds += install_commands(environment(fx), alt[0], alt[1])
            else:
                cmds.append("# or upgrade torch to 2.3 or later, which works with NumPy 1 and 2")
    severity = "error" if (said or fx.str("torch.status") == "import-failed") else "warning"
    title = (
        f"NumPy {np_ver} with torch {trel}, which was built against NumPy 1"
        if facts_say
        else "NumPy ABI mismatch: " + " ".join(said[1].split())[:160]
        if said
        else "NumPy ABI mismatch"
    )
    yield NUMPY_ABI_MISMATCH.finding(title=title, evidence=evidence, fix=Fix(tuple(cmds), why), severity=severity)


# ---------------------------------------------------------------- multiple torch installs


def _same_release(a: Optional[str], b: Optional[str]) -> bool:
    ta, tb = vtuple(release_of(a)), vtuple(release_of(b))
    if not ta or not tb:
        return True  # cannot tell: not evidence of two installs
    n = min(len(ta), len(tb))
    return ta[:n] == tb[:n]


@check(MULTIPLE_TORCH_INSTALLS)
def multiple_torch_installs(fx: Facts) -> Iterator[Finding]:
    imported = fx.str("torch.version")
    location = fx.str("torch.location")
    sources = fx.dicts("packages.torch_sources")
    dists = [d for d in fx.dicts("packages.distributions") if normalize_name(str(d.get("name", ""))) in ("torch", "pytorch")]
    others: List[Tuple[str, Optional[str]]] = []  # (version, where)
    for s in sources[1:]:
        v = s.get("version")
        if isinstance(v, str):
            others.append((v, s.get("path")))
    if not others and not imported:  # torch did not import: two different versions listed are two installs
        listed = list(dict.fromkeys(str(d["version"]) for d in dists if isinstance(d.get("version"), str)))
        others = [(v, "listed by the package manager") for v in listed[1:]]
    if not others:
        for d in dists:
            v = d.get("version")
            if isinstance(v, str) and imported and not _same_release(v, imported):
                others.append(
                    (v, d.get("location") or f"listed by {d.get('listed_by') or d.get('installer') or 'the package manager'}")
                )
    if not others:
        return
    first = sources[0] if sources else {}
    evidence = {
        "torch.version (imported)": imported,
        "torch.location": location,
        "other_installs": [{"version": v, "where": w} for v, w in others],
    }
    if sources:
        evidence["packages.torch_sources"] = [{"version": s.get("version"), "path": s.get("path")} for s in sources]
    # Breakage that comes from it: a companion paired with the other torch, or the user's companion error.
    tv = fx.distribution("torchvision")
    broken = False
    if tv and kb():
        paired = kb().torch_for_torchvision(release_of(tv.get("version")) or "")
        if paired and imported and mm(paired) != mm(imported) and any(mm(paired) == mm(v) for v, _ in others):
            broken = True
            evidence["torchvision"] = f"{tv.get('version')} (paired with torch {paired}, the one not imported)"
    said = search(fx, r"operator torchvision::\w+ does not exist|undefined symbol")
    if said:
        evidence[said[0]] = said[1]
        broken = True
    wanted = others[0][0]
    stray = _s(first.get("path")) if sources else (location.rsplit("/", 1)[0] if location else None)
    cmds = [
        'python -c "import torch; print(torch.__version__, torch.__file__)"  # the copy Python imports',
        f"{PIP} list -v 2>/dev/null | grep -i -E '^torch '  # the copy pip manages",
        "echo $PYTHONPATH  # unset it if it points into another environment",
    ]
    if fx.bool("python.user_site_enabled") and location and "/.local/" in location:
        cmds.append(f"{PIP} uninstall -y torch  # run twice if needed: the ~/.local copy shadows the environment's")
    elif stray and (".egg-link" in stray or "/src/" in stray or not ("site-packages" in stray or "dist-packages" in stray)):
        cmds.append(f"# a source/develop install at {stray}: remove it from sys.path (uninstall its egg-link) or delete it")
    else:
        cmds.append(f"{PIP} uninstall -y torch  # repeat until it says torch is not installed, then reinstall once:")
    if in_conda_env(fx):
        cmds.append(
            "conda list | grep -E '^(pytorch|torch) '  # a conda pytorch next to a pip torch: conda remove --force pytorch"
        )
    cmds.append(f"{PIP} install torch=={release_of(wanted)}  # add the --index-url of the variant you want")
    yield MULTIPLE_TORCH_INSTALLS.finding(
        title=f"torch {imported} is imported, but torch {wanted} is also installed ({others[0][1]})"
        if imported
        else f"torch does not import, and two torch versions are installed ({', '.join(dict.fromkeys(str(d.get('version')) for d in dists))})",
        evidence=evidence,
        fix=Fix(tuple(cmds), "Python imports the first torch on sys.path; with one copy left, what you install is what runs."),
        severity="error" if broken else "warning",
    )


def register():
    return [torchvision_mismatch, numpy_abi_mismatch, multiple_torch_installs]


# ---------------------------------------------------------------- lib9: a companion's CUDA against the CUDA present

#: The companion packages of kb/companion_cuda.json and how a text names them (pip's names, with a version after).
_COMPANION_TEXT = {
    "onnxruntime-gpu": r"onnxruntime[-_]gpu",
    "ctranslate2": r"ctranslate2",
    "tensorflow": r"tensorflow(?:[-_]gpu)?",
}
#: What shows the CUDA-provider failure of a companion (its own words, kb/errors/lib9.json and missing-libraries.json)
#: or its quiet fallback to the CPU (onnxruntime-gpu logs a warning and runs the session on CPUExecutionProvider).
_ORT_CUDA_FAILED = re.compile(
    r"CUDA_PATH is set but CUDA wasn'?t able to be loaded|onnxruntime_providers_cuda|Failed to create CUDAExecutionProvider",
    re.IGNORECASE,
)
_CPU_FALLBACK = re.compile(
    r"\b(?:only|still|just)\s+(?:the\s+)?cpu\b|\b(?:runs?|running|ran|uses?|using|used|falls? back to|fell back to)\s+"
    r"(?:\w+\s+){0,2}(?:on\s+|the\s+)?cpu\b|\bcpu\s+(?:is|was)\s+used\b|\bnot\s+(?:use|using)\s+(?:the\s+)?gpu\b",
    re.IGNORECASE,
)


def companion_version(fx: Facts, name: str) -> Optional[Tuple[str, str]]:
    """(version, where) of companion ``name``: the package list first, else a 'name==x.y' / 'name x.y' in the text."""
    for dist in (name, "tensorflow-gpu") if name == "tensorflow" else (name,):
        d = fx.distribution(dist)
        if d and _s(d.get("version")):
            return str(d["version"]), f"packages: {d.get('name')} {d['version']}"
    if name == "tensorflow":
        return None  # TensorFlow is also built by others (javacpp, conda, source): only pip's own listing counts
    m = re.search(
        rf"\b{_COMPANION_TEXT[name]}\s*(?:==|=|:|\bversion\b|\bv)?\s*v?(\d+\.\d+(?:\.\d+)?)\b", fx.user_error(), re.IGNORECASE
    )
    return (m.group(1), f"the text: {m.group(0).strip()}") if m else None


def companion_build(name: str, version: str) -> Optional[Dict[str, Any]]:
    """The row of kb/companion_cuda.json for ``name`` at ``version`` (its default GPU build's CUDA and cuDNN major)."""
    v = mm(version)
    if not v:
        return None
    for row in _kb_tables._load("companion_cuda")["packages"].get(name, []):
        if mm(row["from"]) <= v <= mm(row["to"]):  # type: ignore[operator]
            return row
    return None


def _same_cuda(need: str, have: str) -> bool:
    """A build for CUDA 11+ loads any release of its major; older builds load sonames of their major.minor."""
    n, h = mm(need), mm(have)
    if not n or not h:
        return True
    if n[0] >= 11 or "." not in need:
        return n[0] == h[0]
    return n == h


def companion_cuda_mismatch(fx: Facts) -> Optional[Dict[str, Any]]:
    """A companion whose GPU build loads another CUDA than the one the facts or the text state, or None.

    {"package", "version", "where", "cuda", "cudnn", "have", "same_cuda"}: ``same_cuda`` True when the CUDA the
    package needs is the one stated (then its missing piece, if it fails, is cuDNN). Only when no other copy of the
    needed CUDA is shown: torch's own CUDA of that major, or the nvidia-*-cuNN wheels of that major."""
    have = fx.str("toolkit.nvcc_version")
    for name in _COMPANION_TEXT:
        got = companion_version(fx, name)
        row = companion_build(name, got[0]) if got else None
        if not got or not row:
            continue
        need = str(row["cuda"])
        out = {"package": name, "version": got[0], "where": got[1], "cuda": need, "cudnn": row["cudnn"], "have": have}
        if not have:
            continue
        if _same_cuda(need, have):
            out["same_cuda"] = True
            return out
        tc = torch_cuda(fx)
        major = mm(need)[0] if mm(need) else None  # type: ignore[index]
        if tc and _same_cuda(need, tc):
            continue  # torch brings that CUDA's libraries (found when torch is imported first)
        if major and any(fx.distribution(f"nvidia-{lib}-cu{major}") for lib in ("cublas", "cuda-runtime", "cudnn", "cufft")):
            continue
        out["same_cuda"] = False
        return out
    return None


def companion_failure_shown(fx: Facts) -> bool:
    """The text shows onnxruntime's CUDA provider failing, or the package running on the CPU."""
    text = fx.user_error()
    return bool(_ORT_CUDA_FAILED.search(text) or _CPU_FALLBACK.search(text))


def _companion_fix(m: Dict[str, Any]) -> List[str]:
    pkg, need, have = m["package"], m["cuda"], m["have"]
    major = (mm(need) or (0, 0))[0]
    cmds: List[str] = []
    if pkg == "onnxruntime-gpu":
        cmds.append('python -c "import onnxruntime as o; print(o.__version__, o.get_available_providers())"')
        if (mm(have) or (0, 0))[0] >= 12:
            cmds.append(f"{PIP} install -U onnxruntime-gpu  # 1.19+ is built for CUDA 12 and cuDNN 9 (the CUDA you have)")
        elif (mm(have) or (0, 0))[0] == 11:
            cmds.append(f'{PIP} install "onnxruntime-gpu==1.18.*"  # the last default build for CUDA 11.8 and cuDNN 8')
    elif pkg == "ctranslate2":
        cmds.append(
            f'{PIP} install "ctranslate2==3.24.0"  # for CUDA 11 + cuDNN 8; 4.4.0 for CUDA 12 + cuDNN 8; 4.5+ for CUDA 12 + cuDNN 9'
        )
    elif pkg == "tensorflow":
        cmds.append("# the TensorFlow release tested with your CUDA and cuDNN: https://www.tensorflow.org/install/source#gpu")
    if major >= 11:
        cmds.append(
            f'{PIP} install "nvidia-cublas-cu{major}" "nvidia-cudnn-cu{major}=={m["cudnn"]}.*"  # or: CUDA {major} and cuDNN {m["cudnn"]}\'s libraries on the loader path'
        )
    else:
        cmds.append(
            f"# or install CUDA {need} and cuDNN {m['cudnn']} beside CUDA {have}, on the loader path (PATH / LD_LIBRARY_PATH)"
        )
    return cmds


_ORT_GPU_NAMED = re.compile(r"onnxruntime[-_]gpu", re.IGNORECASE)


def companion_library_hypothesis(fx: Facts) -> Optional[Tuple[str, Dict[str, Any], List[str], str]]:
    """(title, evidence, commands, why) of a reasoned 'a CUDA library of the companion's CUDA is missing' when no
    library message is shown: the companion's build needs another CUDA than the one stated (kb/companion_cuda.json),
    or onnxruntime-gpu is said to run on the CPU (its CUDA provider failed to load and it fell back). None otherwise."""
    m = companion_cuda_mismatch(fx)
    if m and m.get("same_cuda") is False:
        title = (
            f"Likely: {m['package']} {m['version']} is built for CUDA {m['cuda']} (cuDNN {m['cudnn']}), "
            f"but the CUDA here is {m['have']}: its CUDA {m['cuda']} libraries are not found, so it cannot use the GPU"
        )
        ev = {"companion": m["where"], "companion_needs": f"CUDA {m['cuda']}, cuDNN {m['cudnn']}", "cuda_installed": m["have"]}
        why = f"{m['package']}'s GPU build loads the CUDA and cuDNN libraries of the release it was built with at run time."
        return title, ev, _companion_fix(m), why
    text = fx.user_error()
    fell = _CPU_FALLBACK.search(text)
    if fell and _ORT_GPU_NAMED.search(text) and not re.search(r"execution[-_ ]providers?|get_available_providers", text, re.I):
        title = (
            "Likely: onnxruntime-gpu could not load the CUDA or cuDNN libraries its build needs and fell back to the "
            "CPU (or the CPU package onnxruntime, installed beside it, is the one imported)"
        )
        ev = {"error text": fell.group(0), "companion": "onnxruntime-gpu"}
        cmds = [
            'python -c "import onnxruntime as o; print(o.__version__, o.get_available_providers())"  # no CUDAExecutionProvider: the CPU package shadows it',
            "python -c \"import onnxruntime as o; o.set_default_logger_severity(0); o.InferenceSession('model.onnx', providers=['CUDAExecutionProvider'])\"  # names the library that does not load",
            "# then install the CUDA/cuDNN majors of its build (https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements), or the onnxruntime-gpu build for the CUDA you have",
        ]
        return title, ev, cmds, "onnxruntime-gpu runs a session on the CPU when its CUDA provider cannot load its libraries."
    return None


def companion_cudnn_hypothesis(fx: Facts) -> Optional[Tuple[str, Dict[str, Any], List[str], str]]:
    """onnxruntime's CUDA provider failed while the CUDA its build needs is the one stated: what is left is cuDNN
    (absent, or another major than the build's: kb/companion_cuda.json). None otherwise."""
    if not _ORT_CUDA_FAILED.search(fx.user_error()):
        return None
    m = companion_cuda_mismatch(fx)
    if not m or not m.get("same_cuda"):
        return None
    stated = {int(x) for x in re.findall(r"\bcudnn[\s_=:-]{0,3}v?(\d{1,2})\.\d", fx.user_error(), re.IGNORECASE)}
    if m["cudnn"] in stated:
        return None  # the cuDNN major the build needs is said to be there: nothing points at cuDNN
    title = (
        f"Likely: {m['package']} {m['version']} needs cuDNN {m['cudnn']} (with CUDA {m['cuda']}, which is here): "
        f"cuDNN {m['cudnn']} is missing or another cuDNN major is the one found"
    )
    ev = {"companion": m["where"], "companion_needs": f"CUDA {m['cuda']}, cuDNN {m['cudnn']}", "cuda_installed": m["have"]}
    major = (mm(m["cuda"]) or (0, 0))[0]
    cmds = [
        "where cudnn64_*.dll  # Windows; Linux: ldconfig -p | grep libcudnn  — which cuDNN majors the loader finds",
        f'{PIP} install "nvidia-cudnn-cu{major}=={m["cudnn"]}.*"  # cuDNN {m["cudnn"]} for CUDA {major}; put its bin (lib) folder on PATH / LD_LIBRARY_PATH',
    ]
    return title, ev, cmds, f"{m['package']}'s build loads cuDNN {m['cudnn']}; another major is not compatible with it."
