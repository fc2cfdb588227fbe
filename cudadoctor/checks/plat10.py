"""The platform around the GPUs (round 10, plat10), reasoned from entities, not one sentence:

- pcie-acs-blocks-p2p: several GPUs on PCIe (no NVLink between them) whose collectives hang, deadlock or return
  NaN / wrong results, or that work only with NCCL_P2P_DISABLE=1: GPU peer-to-peer traffic is redirected by
  PCIe Access Control Services (ACS) or the IOMMU (NCCL's troubleshooting guide). A 'Likely' warning from the
  entities (readers/multigpu.py: ``pasted.multi_gpu``); an error when the text shows the ACS/IOMMU evidence.
- nvidia-uvm-not-loaded-after-reboot (declared and checked in jit.py, which calls :func:`uvm_not_loaded_entities`) from the report's nvidia_uvm entities (readers/uvm.py:
  ``pasted.uvm``): lsmod listing nvidia modules without nvidia_uvm, or a line saying it is not loaded (an error);
  CUDA's unknown error (999) on NixOS or fixed by loading the module, with no suspend/resume and no reload in the
  text ('Likely', a warning). What separates it from nvidia-uvm-stale (loaded, broken by a suspend) is named there.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, Optional, Tuple

from cudadoctor.errortext import kb_document
from cudadoctor.facts import Facts
from cudadoctor.interpret.gpus import no_gpu_stated
from cudadoctor.model import Code, Finding, Fix, check

from ._common import search, text_of
from .driver import NO_NVIDIA_DRIVER

_NCCL_TROUBLESHOOTING = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"

PCIE_ACS_BLOCKS_P2P = Code(
    code="pcie-acs-blocks-p2p",
    title="PCIe ACS (or the IOMMU) redirects GPU peer-to-peer traffic: NCCL collectives hang or return wrong results",
    area="system",
    severity="error",
    explanation={
        "what": "On a machine with several GPUs connected over PCIe only (no NVLink), multi-GPU work hangs at the first "
        "collective (ncclAllReduce spinning at 100 % with no progress, DDP or nccl-tests frozen), or gives NaN / wrong "
        "results, while every GPU works alone; setting NCCL_P2P_DISABLE=1 makes it work (slower). CUDA's "
        "p2pBandwidthLatencyTest shows very low P2P bandwidth or wrong data, simpleP2P fails verification.",
        "why": "NCCL copies between GPUs of one node with CUDA peer-to-peer (P2P) over PCIe when there is no NVLink. "
        "When PCI Access Control Services (ACS) are enabled on the PCIe bridges or switch ports between the GPUs, "
        "or the IOMMU (Intel VT-d, AMD-Vi) translates device addresses, each peer write is redirected up to the root "
        "complex, where it is slowed to a crawl, dropped or mistranslated: NCCL waits forever or reads garbage. "
        "Many workstation and server boards (and hypervisors, for isolation) enable ACS by default. NCCL's guide: "
        "'PCI Access Control Services (ACS)' and 'GPU Direct'.",
        "confirm": "`nvidia-smi topo -m` (PIX/PXB/PHB/NODE/SYS between the GPUs: a PCIe path; NV# is NVLink); "
        "`sudo lspci -vvv | grep ACSCtl` (any 'SrcValid+' on a bridge above the GPUs means ACS is on); "
        "`cat /proc/cmdline` and `dmesg | grep -i -e DMAR -e IOMMU -e AMD-Vi`; CUDA samples' p2pBandwidthLatencyTest "
        "(P2P=Enabled bandwidth far below P2P=Disabled, or errors); `NCCL_DEBUG=INFO` shows 'via P2P/IPC' before the hang; "
        "the job runs with NCCL_P2P_DISABLE=1.",
        "fix": "Disable ACS on the bridges between the GPUs: in the BIOS (ACS / 'PCIe ACS control' off, or VT-d/IOMMU off "
        "on AMD boards), at each boot with `sudo setpci -s <bridge> ECAP_ACS+0x6.w=0000` for every bridge whose ACSCtl "
        "shows SrcValid+, or keep the IOMMU out of the way with `iommu=pt` (or intel_iommu=off / amd_iommu=off) on the "
        "kernel command line. In a VM, P2P needs ATS/ACS settings of the hypervisor. Until then NCCL_P2P_DISABLE=1 "
        "(NCCL uses shared memory through the host instead: correct, slower) or NCCL_P2P_LEVEL=NVL.",
    },
    links=(
        _NCCL_TROUBLESHOOTING + "#pci-access-control-services-acs",
        _NCCL_TROUBLESHOOTING + "#gpu-direct",
        "https://github.com/NVIDIA/nccl/issues/631",
        "https://github.com/NVIDIA/nccl/issues/2079",
    ),
)

_CONFIRM = (
    "nvidia-smi topo -m  # PIX/PXB/PHB/NODE/SYS between the GPUs = PCIe path (NV# = NVLink)",
    "sudo lspci -vvv | grep -i acsctl  # 'SrcValid+' on a bridge above the GPUs: ACS is enabled",
    "cat /proc/cmdline; sudo dmesg | grep -i -e DMAR -e IOMMU -e AMD-Vi  # the IOMMU in translating mode",
    "NCCL_DEBUG=INFO <the job>  # 'via P2P/IPC' on the channels before the hang",
)
_FIX = (
    "# BIOS: disable PCIe ACS (on AMD boards also IOMMU / SVM-IOMMU), or at each boot for every bridge with SrcValid+:",
    "sudo setpci -s <bridge BDF> ECAP_ACS+0x6.w=0000",
    "# or on the kernel command line: iommu=pt (or intel_iommu=off / amd_iommu=off), then reboot",
    "NCCL_P2P_DISABLE=1 <the job>  # stop-gap: correct but slower (shared memory through the host instead of P2P)",
)


@check(PCIE_ACS_BLOCKS_P2P)
def pcie_acs_blocks_p2p(fx: Facts) -> Iterator[Finding]:
    mg = fx.dict("pasted.multi_gpu") or {}
    if not mg.get("collective"):
        return
    acs = mg.get("acs")
    if mg.get("nvlink") and not acs:
        return  # the GPUs talk over NVLink: P2P does not cross PCIe bridges
    trouble = mg.get("symptom") or mg.get("workaround")
    pcie = mg.get("pcie") or mg.get("p2p") or acs
    if not pcie and not mg.get("multinode"):
        # one machine, several GPUs that hang together while the same work runs on one GPU (or over gloo), or
        # GPUs sold only as PCIe boards: the peer-to-peer path NCCL's guide names first (session 21)
        pcie = (mg.get("contrast") or mg.get("pcie_board")) if mg.get("symptom") else None
    if not (trouble and pcie):
        return
    evidence: Dict[str, Any] = {}
    for name in ("collective", "symptom", "workaround", "contrast", "pcie", "pcie_board", "p2p", "acs"):
        got = mg.get(name)
        if isinstance(got, dict) and got.get("text"):
            evidence[f"pasted text, line {got.get('line')} ({name})"] = got["text"]
    why = "With ACS or a translating IOMMU between the GPUs, CUDA peer-to-peer writes are redirected to the root complex."
    if acs:
        yield PCIE_ACS_BLOCKS_P2P.finding(
            title="Multi-GPU collectives fail over PCIe and the text shows ACS/IOMMU between the GPUs: "
            "peer-to-peer traffic is redirected",
            evidence=evidence,
            fix=Fix(_CONFIRM + _FIX, why),
        )
        return
    yield PCIE_ACS_BLOCKS_P2P.finding(
        title="Likely: PCIe ACS or the IOMMU blocks GPU peer-to-peer (multi-GPU on PCIe, no NVLink: "
        "collectives hang or give wrong results; NCCL_P2P_DISABLE=1 works around it)",
        evidence=evidence,
        fix=Fix(_CONFIRM + _FIX, why + " Confirm with lspci's ACSCtl before changing the BIOS."),
        severity="warning",
    )


#: CUDA's unknown error at initialisation, in the driver's, the runtime's and torch's words (cuda.h: CUDA_ERROR_UNKNOWN
#: = 999; driver_types.h: cudaErrorUnknown = 999; torch: "CUDA unknown error - this may be due to ...").
_CUDA_UNKNOWN = r"CUDA_ERROR_UNKNOWN|cudaErrorUnknown|CUDA unknown error|CUDA error: unknown error|\(999\)|\berror 999\b"
_UVM_CMDS = (
    "lsmod | grep nvidia_uvm; ls -l /dev/nvidia-uvm*  # nothing listed: the module is not loaded",
    "sudo modprobe nvidia-uvm  # or: sudo nvidia-modprobe -u -c=0 (also creates /dev/nvidia-uvm*)",
    "echo nvidia-uvm | sudo tee /etc/modules-load.d/nvidia-uvm.conf  # load it at every boot",
    '# NixOS: boot.kernelModules = [ "nvidia_uvm" ]; (the softdep does not load it with the open kernel modules)',
)


def uvm_not_loaded_shown(fx: Facts) -> bool:
    """Whether :func:`uvm_not_loaded_entities` names the module not loaded (plat11): lsmod without nvidia_uvm, a line
    saying so, or CUDA's unknown error with no suspend and no reload, on NixOS or fixed by loading the module. Then
    nvidia-uvm-stale (text_classes.py, matched on the unknown error alone) steps back: nothing says it went stale."""
    u = fx.dict("pasted.uvm") or {}
    if (u.get("lsmod_nvidia") and u.get("lsmod_has_uvm") is False) or u.get("not_loaded"):
        return True
    if u.get("suspend") or u.get("reload_fix"):
        return False
    return bool((u.get("nixos") or u.get("load_fix")) and search(fx, _CUDA_UNKNOWN))


def uvm_not_loaded_entities(fx: Facts, code: Code) -> Iterator[Finding]:
    """``code`` (nvidia-uvm-not-loaded-after-reboot) from the report's nvidia_uvm entities (``pasted.uvm``)."""
    u = fx.dict("pasted.uvm") or {}
    if not u:
        return
    evidence: Dict[str, Any] = {}
    for name in ("not_loaded", "load_fix", "boot", "nixos", "open_module"):
        got = u.get(name)
        if isinstance(got, dict) and got.get("text"):
            evidence[f"pasted text, line {got.get('line')} ({name})"] = got["text"]
    why = "CUDA needs nvidia_uvm and /dev/nvidia-uvm; nothing loaded the module since the boot."
    listed = u.get("lsmod_nvidia") and u.get("lsmod_has_uvm") is False
    if listed or u.get("not_loaded"):
        if listed:
            evidence["lsmod (nvidia modules listed)"] = ", ".join(u["lsmod_nvidia"]) + " (no nvidia_uvm)"
        yield code.finding(
            title="The nvidia_uvm module is not loaded (lsmod / the report says so): CUDA cannot initialise",
            evidence=evidence,
            fix=Fix(_UVM_CMDS, why),
        )
        return
    if u.get("suspend") or u.get("reload_fix"):
        return  # a suspend or a reload that fixed it: the loaded-but-stale module (nvidia-uvm-stale)
    said = search(fx, _CUDA_UNKNOWN)
    if not said or not (u.get("nixos") or u.get("load_fix")):
        return
    evidence = {said[0]: said[1], **evidence}
    yield code.finding(
        title="Likely: nvidia_uvm is not loaded since the boot (CUDA's unknown error 999 with no suspend; "
        + ("on NixOS nothing loads it on first use)" if u.get("nixos") else "loading the module fixes it)"),
        evidence=evidence,
        fix=Fix(_UVM_CMDS, why + " A suspend/resume instead would be nvidia-uvm-stale (reload the module)."),
        severity="warning",
    )


def _no_gpu_said(fx: Facts, text: str) -> Optional[Tuple[str, str]]:
    """(the person's words, CUDA's failure line) when a person says the machine has no GPU at all (kb/errors/
    plat11.json no_gpu_said), CUDA was asked for and is unavailable, and nothing shows an NVIDIA GPU or driver."""
    failed = re.search(kb_document("gpuid9.json")["cpu_notebooks"]["cuda_unavailable"], text)
    said = no_gpu_stated(fx, text) if failed else None  # readers/nogpu.py, from every line of the paste
    return (said, failed.group(0)) if said and failed else None


@check(NO_NVIDIA_DRIVER, name="no-gpu-said", fallback=True)  # driver.py owns the code
def no_gpu_said(fx: Facts) -> Iterator[Finding]:
    """Where nothing else found a cause (plat11): a person says the machine has no GPU or graphics card, CUDA was asked
    for and is unavailable, and no NVIDIA GPU or driver is shown: no NVIDIA GPU, so no driver (no-nvidia-driver)."""
    text = text_of(fx)
    got = _no_gpu_said(fx, text) if text.strip() else None
    if not got:
        return
    yield NO_NVIDIA_DRIVER.finding(
        title="Likely: this machine has no NVIDIA GPU (the report says it has no GPU), so CUDA has no device or driver",
        evidence={"the report says": got[0], "cuda": got[1], "nvidia_gpu_shown": False},
        fix=Fix(
            (
                "nvidia-smi -L  # lists the NVIDIA GPUs; 'command not found' or nothing: none here",
                "# run the program on its CPU path (drop --cuda / --device cuda, or use device='cpu'), slower",
                "# or run it on a machine with an NVIDIA GPU (a GPU cloud instance, Colab with a GPU runtime)",
            ),
            "CUDA needs an NVIDIA GPU and its driver; a machine without one can only run the CPU path.",
        ),
        severity="warning",
    )


def register():
    return [pcie_acs_blocks_p2p, no_gpu_said]
