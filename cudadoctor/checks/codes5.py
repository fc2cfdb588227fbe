"""Causes that had no code (round 5), each reasoned from entities and facts, not one sentence:

- non-nvidia-gpu: the only GPUs named are AMD's, Intel's or Apple's (or the machine is a Mac): CUDA cannot exist there;
- gpu-lacks-bf16: bfloat16 asked of a GPU below compute capability 8.0 (its name or capability, from the text or facts);
- vgpu-license-unlicensed: an NVIDIA vGPU guest without a licence (said, or "busy or unavailable" on a vGPU);
- mmcv-without-compiled-ops: mmcv installed without its compiled ops (mmcv._ext).

Wordings and the vendor table: kb/errors/codes5.json. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Optional

from cudadoctor.errortext import ROCM_IN_USE, gpu_vendors
from cudadoctor.facts import Facts
from cudadoctor.interpret import build_kind, os_key
from cudadoctor.interpret.gpus import gpus, split_by_capability
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match, said_or_pasted, search, text_of
from .arch import torch_named

# --- round 5: codes5 ---

NON_NVIDIA_GPU = Code(
    code="non-nvidia-gpu",
    title="This machine's GPU is not an NVIDIA GPU (AMD, Intel or Apple): CUDA cannot run on it",
    area="gpu",
    severity="error",
    explanation={
        "what": "The only GPUs the facts or the text name are AMD's (Radeon, Instinct), Intel's (Arc, Iris, UHD) or "
        "Apple's (M1..M4, a Mac), and no NVIDIA GPU is named, while the program asks for CUDA "
        "(torch.cuda.is_available() False, 'Torch not compiled with CUDA enabled', 'Invalid CUDA device').",
        "why": "CUDA is NVIDIA's: torch.cuda (and every CUDA build) needs an NVIDIA GPU and driver. AMD GPUs run torch "
        "through ROCm builds (which keep the torch.cuda API, Linux only), Intel GPUs through torch's XPU builds "
        "(device 'xpu'), Apple GPUs through MPS (device 'mps'); nothing makes a CUDA build use them. On macOS no torch "
        "release ships CUDA at all, so a CPU torch there is the right install: the program's device choice is the fix.",
        "confirm": "Windows: Device Manager > Display adapters (or `wmic path win32_VideoController get name`); Linux: "
        "`lspci | grep -Ei 'vga|3d|display'`; macOS: About This Mac. No NVIDIA line: there is no CUDA device. A laptop "
        "with an Intel or AMD iGPU AND an NVIDIA GPU is not this case.",
        "fix": "Run on the CPU (the program's device option: device='cpu', --device cpu, -gpu c), or use the vendor's "
        "backend: AMD on Linux: torch from https://download.pytorch.org/whl/rocmX.Y; Intel: torch from "
        "https://download.pytorch.org/whl/xpu and device 'xpu'; Apple: device 'mps'. For CUDA itself, a machine "
        "with an NVIDIA GPU.",
    },
    links=(
        "https://pytorch.org/get-started/locally/",
        "https://pytorch.org/docs/stable/notes/mps.html",
        "https://docs.pytorch.org/docs/stable/notes/get_start_xpu.html",
        "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/3rd-party/pytorch-install.html",
    ),
)

GPU_LACKS_BF16 = Code(
    code="gpu-lacks-bf16",
    title="bfloat16 was asked of a GPU below compute capability 8.0 (before Ampere), which has no native bfloat16",
    area="gpu",
    severity="error",
    explanation={
        "what": "A program asked for bfloat16 and refused or failed: vLLM's 'Bfloat16 is only supported on GPUs with "
        "compute capability of at least 8.0', torch.autocast's 'Current CUDA Device does not support bfloat16', "
        "transformers' 'Your setup doesn't support bf16/gpu', on a GPU whose compute capability (named in the text "
        "or looked up from its name) is below 8.0: Pascal, Volta (V100), Turing (T4, RTX 20xx).",
        "why": "Native bfloat16 arithmetic and tensor cores arrived with Ampere (compute capability 8.0); "
        "torch.cuda.is_bf16_supported() is False below it for most uses, and vLLM, transformers and autocast refuse. "
        "Many models' configs default to bfloat16. The install is fine: the dtype is not for this GPU.",
        "confirm": "`nvidia-smi --query-gpu=name,compute_cap --format=csv` (below 8.0), and "
        '`python -c "import torch; print(torch.cuda.is_bf16_supported())"`.',
        "fix": "Use float16 (or float32): vLLM `--dtype half` / LLM(..., dtype='half'); transformers `fp16=True` instead "
        "of `bf16=True`, torch_dtype=torch.float16; autocast(dtype=torch.float16). Or run on an Ampere-or-newer GPU.",
    },
    links=(
        "https://github.com/vllm-project/vllm/issues/1157",
        "https://pytorch.org/docs/stable/amp.html",
        "https://developer.nvidia.com/cuda-gpus",
    ),
)

VGPU_LICENSE_UNLICENSED = Code(
    code="vgpu-license-unlicensed",
    title="The NVIDIA vGPU in this virtual machine has no licence, so CUDA is refused or throttled",
    area="driver",
    severity="error",
    explanation={
        "what": "An NVIDIA vGPU guest (a cloud or VMware/KVM VM with a GRID / vGPU profile) shows 'License Status : "
        "Unlicensed (Restricted)' in nvidia-smi -q, nvidia-gridd fails to acquire a licence, or CUDA fails with "
        "'all CUDA-capable devices are busy or unavailable' although nvidia-smi shows the GPU idle.",
        "why": "NVIDIA vGPU software is licensed per guest: without a licence (expired, licence server unreachable, "
        "client configuration token missing) the guest driver runs restricted after a grace period: CUDA and "
        "compute are disabled or capped. The GPU, driver and program are otherwise fine.",
        "confirm": "`nvidia-smi -q | grep -iA2 licen` (License Status), `journalctl -u nvidia-gridd` (or "
        "/var/log/messages) for licence acquisition failures, `nvidia-smi -q | grep -i 'virtualization mode'`.",
        "fix": "Restore the licence: check the licence server / NLS client configuration token "
        "(/etc/nvidia/ClientConfigToken), gridd.conf FeatureType, network access to the licence server, then "
        "`sudo systemctl restart nvidia-gridd`; on a cloud VM, ask the provider (the licence is theirs).",
    },
    links=(
        "https://docs.nvidia.com/vgpu/latest/grid-licensing-user-guide/index.html",
        "https://github.com/Azure/AKS/issues/4869",
    ),
)

MMCV_WITHOUT_COMPILED_OPS = Code(
    code="mmcv-without-compiled-ops",
    title="mmcv is installed without its compiled CUDA/C++ ops (No module named 'mmcv._ext')",
    area="packages",
    severity="error",
    explanation={
        "what": "Importing mmcv's ops (mmdet, mmseg, mmrotate, mmdet3d ... do) fails with \"No module named 'mmcv._ext'\".",
        "why": "mmcv's ops are one compiled extension, mmcv._ext. mmcv 1.x ships it only in the mmcv-full package "
        "('pip install mmcv' is the lite one without ops); mmcv 2.x ships it in mmcv (mmcv-lite has none) but only "
        "where a prebuilt wheel matches this torch and CUDA; otherwise pip builds from source, and a build without "
        "ops (MMCV_WITH_OPS=0) or one that failed leaves no _ext.",
        "confirm": "`pip list | grep -i mmcv` (mmcv 1.x without mmcv-full, or mmcv-lite), "
        '`python -c "import mmcv.ops"`, `python -c "import torch; print(torch.__version__, torch.version.cuda)"`.',
        "fix": "Uninstall the package without ops and install the full one built for this torch and CUDA: "
        '`pip install -U openmim && mim install mmcv-full` (mmcv 1.x) or `mim install "mmcv>=2.0.0"` (2.x), or '
        "pip with the find-links URL for your torch/CUDA from mmcv's installation page.",
    },
    links=(
        "https://mmcv.readthedocs.io/en/latest/get_started/installation.html",
        "https://github.com/open-mmlab/mmcv/issues/2059",
    ),
)


# ---------------------------------------------------------------- non-NVIDIA GPUs


def _nvidia_named(fx: Facts) -> bool:
    # A device list whose every name is another vendor's (collect_env's "GPU 0: Intel Iris Xe Graphics") is no NVIDIA GPU.
    names = [str(d.get("name") or "") for d in fx.dicts("nvml.devices")]
    nvml_other = bool(names) and all(gpu_vendors.vendor_of(n) for n in names)
    if (fx.int("nvml.device_count") and not nvml_other) or fx.int("torch.device_count"):
        return True
    if fx.list("system.pci_nvidia_devices"):
        return True
    if fx.get("pasted.nvidia_named") or (fx.get("pasted.prose") or {}).get("gpus"):
        return True
    if any(g.get("name") and not gpu_vendors.vendor_of(str(g["name"])) for g in gpus(fx)):
        return True
    if gpu_vendors.nvidia_stated(text_of(fx)):
        return True  # gpuid9: "I have an NVIDIA GPU" names one without its model
    return gpu_vendors.nvidia_named(text_of(fx).splitlines()) is not None


def other_gpus(fx: Facts) -> List[Dict[str, Any]]:
    """Non-NVIDIA GPUs (or a Mac) the facts and texts name, with no NVIDIA GPU named anywhere; [] otherwise."""
    named: List[Dict[str, Any]] = [g for g in fx.get("pasted.other_gpus") or [] if isinstance(g, dict)]
    for g in gpus(fx):
        v = gpu_vendors.vendor_of(str(g.get("name") or ""))
        if v:
            named.append({"vendor": v, "name": g["name"], "where": "gpus"})
    named += [dict(g, where="error text") for g in gpu_vendors.other_gpus(text_of(fx).splitlines())]
    field = (fx.dict("collect_env.fields") or {}).get("GPU models and configuration")
    if isinstance(field, str) and not named:  # gpuid9: the report's GPU field, as written ("intel graphics 520 hd")
        named += [dict(g, where="gpus") for g in gpu_vendors.other_gpus(field.splitlines())]
    if os_key(fx) == "macos" and (fx.str("system.os") or ""):
        named.append({"vendor": "apple", "name": fx.str("system.os"), "where": "system.os"})
    absent = gpu_vendors.nvidia_absent(text_of(fx).splitlines())
    if absent and not named:  # a person says the machine has no NVIDIA GPU (gpuid9): the vendor is not named
        named.append({"vendor": "unnamed", "name": f'no NVIDIA GPU ("{absent[1]}")', "where": "error text"})
    if not named or build_kind(fx) == "rocm" or _nvidia_named(fx):
        return []
    return named


def only_other_gpus(fx: Facts) -> bool:
    """The machine's GPUs, as far as the facts and texts name any, are all not NVIDIA's (a Mac included)."""
    return bool(other_gpus(fx))


#: The program asked for CUDA and did not get it (torch's and other tools' words for it), not any mention of CUDA.
_WANTS_CUDA = (
    r"(?i)Torch not compiled with CUDA enabled|torch\.cuda\.is_available\(\)\W{0,20}(?:returns?\W{0,4})?False|"
    r"Invalid CUDA '?device|Found no NVIDIA driver|No CUDA GPUs are available|no CUDA-capable device|"
    r"CUDA (?:is not available|driver (?:version )?is insufficient)|cuda(?::\d)? (?:device )?(?:not available|requested)"
    # programs' own words for finding no CUDA device: COLMAP's "Check failed: num_cuda_devices > 0 (0 vs. 0)"
    # (colmap#1032, #840), AliceVision/Meshroom's "This program needs a CUDA-Enabled GPU" (Meshroom#370)
    r"|Check failed: num_cuda_devices > 0|This program needs a CUDA[- ]Enabled GPU"
)


#: gpuid9: a text that asks about CUDA, a GPU or NVIDIA at all (with only another vendor's GPU named, that is the question).
_ASKS_GPU = r"(?i)\bcuda\b|\bgpus?\b|nvidia|\bgraphics\s+card|tarjeta\s+gr[aá]fica|显卡|グラフィック"


#: On a Mac, asking for NVIDIA's stack by other means than torch's words: the CUDA toolkit (CUDA_HOME, nvcc), Docker's
#: GPU request (--gpus: no NVIDIA runtime can exist there), nvidia-smi (b158: MeloTTS#40, CatVTON#23).
#: Session 26 (b260, b261: Cellpose, Wav2Lip, MuseTalk, MeshTalk on Apple silicon): a CUDA error or CUDA "not installed /
#: working" in any program's words, torch refusing a checkpoint saved on CUDA, the GPU "not appearing".
_MAC_WANTS_NVIDIA = (
    r"(?i)CUDA_HOME|\bnvcc\b|could not select device driver|--gpus\b|nvidia-smi"
    r"|deserialize object on a CUDA device"
    r"|\bCUDA\b[^\n]{0,40}?\b(?:errors?|not\s+(?:installed|working|available|found|supported|compiled))\b"
    r"|\berrors?\b[^\n]{0,20}?\bCUDA\b"
    r"|\bGPU\b[^\n]{0,20}?\b(?:does\s*n[o']t|did\s*n[o']t|not|never)\s+(?:appear|show|work|open|start|get\s+used|used)"
)


@check(NON_NVIDIA_GPU)
def non_nvidia_gpu(fx: Facts) -> Iterator[Finding]:
    named = other_gpus(fx)
    if not named:
        return
    if {g["vendor"] for g in named} == {"amd"} and said_or_pasted(fx, ROCM_IN_USE.pattern, "rocm_in_use"):
        return  # the reporter runs ROCm on the AMD GPU (torch.cuda is its API there): not a CUDA-on-AMD mix-up
    from .xlate26 import layer_failure

    if layer_failure(text_of(fx)):
        return  # CUDA run on that GPU on purpose, through SCALE or ZLUDA, failing there (cuda-translation-layer-gap)
    wants = fx.get("torch.cuda_available") is False or search(fx, _WANTS_CUDA) is not None
    if not wants and {g["vendor"] for g in named} == {"apple"}:
        wants = search(fx, _MAC_WANTS_NVIDIA) is not None
    vendors = sorted({g["vendor"] for g in named})
    if not wants and vendors != ["apple"]:
        # gpuid9: an AMD / Intel / other GPU named in a text that asks about CUDA, the GPU or NVIDIA at all ("I cant
        # use GPU training"), or a machine report whose only GPUs are another vendor's with no other error to explain
        # (nothing else failed: the report is about using that GPU). A Mac stays quiet unless CUDA was asked for.
        wants = search(fx, _ASKS_GPU) is not None or (not text_of(fx).strip() and any(g.get("where") == "gpus" for g in named))
    if not wants:
        return  # nothing asked for CUDA: a machine without NVIDIA GPU is not a problem by itself
    names = ", ".join(dict.fromkeys(str(g["name"]) for g in named))
    said = search(fx, _WANTS_CUDA)
    evidence: Dict[str, Any] = {"non_nvidia_gpus": names, "nvidia_gpu_named": False}
    if said:
        evidence[said[0]] = said[1]
    cmds = ["# run on the CPU: the program's device option (device='cpu', --device cpu)"]
    if "amd" in vendors:
        cmds.append(f"{PIP} install torch --index-url https://download.pytorch.org/whl/rocm6.2  # AMD, Linux only (ROCm)")
    if "intel" in vendors:
        cmds.append(f"{PIP} install torch --index-url https://download.pytorch.org/whl/xpu  # Intel GPU: device 'xpu'")
    if "apple" in vendors:
        cmds.append("# macOS: torch has no CUDA there; use device 'mps' (Apple GPU) or 'cpu'")
    apple_only = vendors == ["apple"]
    who = gpu_vendors.VENDOR_NAMES
    named_vendors = [v for v in vendors if v in who]
    yield NON_NVIDIA_GPU.finding(
        title=(
            f"This is a Mac ({names}): CUDA does not exist on macOS, so the CPU torch is right and the program must be "
            "told to use 'mps' or 'cpu' instead of CUDA"
            if apple_only and torch_named(fx, text_of(fx))
            else f"This is a Mac ({names}): CUDA does not exist on macOS, so no CUDA program or CUDA build runs there: "
            "use the program's CPU (or Apple GPU) path, or a machine with an NVIDIA GPU"
            if apple_only
            else f"The GPU named is {' / '.join(who[v] for v in named_vendors)} ({names}), not NVIDIA: CUDA cannot run on it"
            if named_vendors
            else f"The reporter says this machine has {names}: CUDA (and a CUDA build of torch) cannot run without one"
        ),
        evidence=evidence,
        fix=Fix(tuple(cmds), "CUDA needs an NVIDIA GPU; other vendors' GPUs use ROCm, XPU or MPS builds."),
        severity="warning" if apple_only or not named_vendors else "error",  # gpuid9: a statement alone: a warning,
    )


# ---------------------------------------------------------------- bfloat16 below compute capability 8.0

_CAP_IN_TEXT = re.compile(r"(?i)(?:Your\s+(?P<name>[^\n]{1,60}?)\s+GPU\s+)?has compute capability\s+(?P<cap>\d{1,2}\.\d)")


@check(GPU_LACKS_BF16)
def gpu_lacks_bf16(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, GPU_LACKS_BF16)
    if not said:
        return
    m = _CAP_IN_TEXT.search(text_of(fx))
    cards = [(str(g.get("name") or "GPU"), g.get("capability")) for g in gpus(fx)]
    if m:
        cards.insert(0, ((m.group("name") or "GPU").strip(), m.group("cap")))
    low, high = split_by_capability(cards, 80)
    if high and not low:
        return  # every GPU shown has bfloat16: the text is not about this machine's GPU
    # transformers', Accelerate's, and cuBLAS refusing a CUDA_R_16BF GEMM: none names the GPU
    guess = not low and ("bf16/gpu" in said[1] or "a supported device" in said[1] or "CUBLAS_STATUS_NOT_SUPPORTED" in said[1])
    if guess and (build_kind(fx) == "cpu" or fx.bool("torch.cuda_available") is False):
        return  # transformers says the same with no CUDA at all (a CPU torch, no driver): other checks tell which
    evidence: Dict[str, Any] = {said[0]: said[1]}
    if low:
        evidence["gpu"], evidence["compute_capability"] = low[0]
    gpu = f"{low[0][0]} (compute capability {low[0][1]})" if low else "this GPU"
    title = f"bfloat16 needs compute capability 8.0 (Ampere or newer); {gpu} has no native bfloat16: use float16"
    if guess:
        # transformers' message with no GPU shown and nothing saying CUDA is unusable: in the threads that carry
        # it the GPU is nearly always one below 8.0 (V100, T4, P100, RTX 20xx); a CPU torch or a missing driver
        # says so in the facts, where this stays silent. A warning that names what confirms it.
        evidence["gpu"] = "not shown"
        title = (
            "Likely: the GPU is older than Ampere (compute capability below 8.0, e.g. V100, T4, P100, RTX 20xx), which "
            "has no native bfloat16: use float16 (the GPU is not shown; check "
            '`python -c "import torch; print(torch.cuda.get_device_name(), torch.cuda.get_device_capability())"`)'
        )
    yield GPU_LACKS_BF16.finding(
        title=title,
        evidence=evidence,
        fix=Fix(
            (
                "vllm serve <model> --dtype half  # or LLM(model=..., dtype='half')",
                "# transformers: TrainingArguments(fp16=True) instead of bf16=True; from_pretrained(..., torch_dtype=torch.float16)",
                "# torch: torch.autocast('cuda', dtype=torch.float16)",
            ),
            "Native bfloat16 starts at compute capability 8.0; below it float16 is the fast half-precision type.",
        ),
        severity="error" if not guess and (low or "8.0" in said[1]) else "warning",
    )


# ---------------------------------------------------------------- vGPU licence

_VGPU = re.compile(r"\bvGPU\b|\bGRID\s+[A-Z]\d{1,3}|\b[A-Z]\d{1,3}[A-Z]?-\d{1,2}[QCAB]\b|\bvirtual(?:ised|ized)? GPU\b")
_BUSY = r"busy or unavailable|cudaErrorDevicesUnavailable|CUDA_ERROR_DEVICE_UNAVAILABLE"


def vgpu_named(fx: Facts) -> Optional[str]:
    """Where the facts or texts show an NVIDIA vGPU guest (the OS line, a GPU's profile name, the text), or None."""
    facts = [("system.os", fx.str("system.os") or ""), ("system.distro", fx.str("system.distro") or "")]
    for where, value in facts + [("gpu", str(g.get("name") or "")) for g in gpus(fx)]:
        if _VGPU.search(value):
            return f"{where}: {value}"
    if fx.get("pasted.vgpu"):
        return str(fx.get("pasted.vgpu"))
    hit = search(fx, _VGPU.pattern)
    return f"{hit[0]}: {hit[1]}" if hit else None


@check(VGPU_LICENSE_UNLICENSED)
def vgpu_license_unlicensed(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, VGPU_LICENSE_UNLICENSED)
    fix = Fix(
        (
            "nvidia-smi -q | grep -i -A2 licen  # License Status",
            "journalctl -u nvidia-gridd --no-pager | tail -50  # licence acquisition",
            "sudo systemctl restart nvidia-gridd  # after fixing the licence server / client configuration token",
            "# cloud VM: the vGPU licence is the provider's: open a ticket with them",
        ),
        "An unlicensed vGPU guest runs restricted: CUDA is refused or capped until a licence is acquired.",
    )
    if said:
        yield VGPU_LICENSE_UNLICENSED.finding(
            title="The vGPU guest is unlicensed: CUDA is refused or throttled until it gets a licence",
            evidence={said[0]: said[1]},
            fix=fix,
        )
        return
    busy = search(fx, _BUSY)
    where = vgpu_named(fx) if busy else None
    if busy and where:
        yield VGPU_LICENSE_UNLICENSED.finding(
            title="CUDA refused a context on an NVIDIA vGPU guest: an unlicensed vGPU is the usual cause there "
            "(nvidia-smi -q shows the License Status)",
            evidence={busy[0]: busy[1], "vgpu": where},
            fix=fix,
            severity="warning",
        )


# ---------------------------------------------------------------- mmcv without its ops


@check(MMCV_WITHOUT_COMPILED_OPS)
def mmcv_without_compiled_ops(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, MMCV_WITHOUT_COMPILED_OPS)
    if not said:
        return
    mmcv = (fx.distribution("mmcv") or {}).get("version")
    full = (fx.distribution("mmcv-full") or {}).get("version")
    lite = (fx.distribution("mmcv-lite") or {}).get("version")
    major = int(mmcv.split(".")[0]) if isinstance(mmcv, str) and mmcv.split(".")[0].isdigit() else None
    if lite:
        what = f"mmcv-lite {lite} (no ops)"
    elif mmcv and not full and major is not None and major < 2:
        what = f"mmcv {mmcv}: the 1.x package without ops (the ops are in mmcv-full)"
    elif full:
        what = f"mmcv-full {full} without its compiled ops (no prebuilt wheel for this torch/CUDA, a source build failed)"
    else:
        what = "the mmcv installed has no compiled ops"
    cmds = (
        f"{PIP} uninstall -y mmcv mmcv-lite mmcv-full",
        f"{PIP} install -U openmim",
        'mim install mmcv-full  # mmcv 1.x (mmdet 2.x) ... or: mim install "mmcv>=2.0.0"  (mmdet 3.x)',
        'python -c "import mmcv.ops"  # must import without error',
    )
    yield MMCV_WITHOUT_COMPILED_OPS.finding(
        title=f"mmcv's compiled ops (mmcv._ext) are missing: {what}",
        evidence={said[0]: said[1], "mmcv": mmcv, "mmcv-full": full, "mmcv-lite": lite},
        fix=Fix(cmds, "mmcv's ops are one compiled extension shipped only by the full package built for this torch and CUDA."),
    )


def register():
    return [non_nvidia_gpu, gpu_lacks_bf16, vgpu_license_unlicensed, mmcv_without_compiled_ops]
