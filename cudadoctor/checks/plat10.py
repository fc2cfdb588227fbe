"""The platform around the GPUs (round 10, plat10), reasoned from entities, not one sentence:

- pcie-acs-blocks-p2p: several GPUs on PCIe (no NVLink between them) whose collectives hang, deadlock or return
  NaN / wrong results, or that work only with NCCL_P2P_DISABLE=1: GPU peer-to-peer traffic is redirected by
  PCIe Access Control Services (ACS) or the IOMMU (NCCL's troubleshooting guide). A 'Likely' warning from the
  entities (readers/multigpu.py: ``pasted.multi_gpu``); an error when the text shows the ACS/IOMMU evidence.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

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
    if not (trouble and pcie):
        return
    evidence: Dict[str, Any] = {}
    for name in ("collective", "symptom", "workaround", "pcie", "p2p", "acs"):
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


def register():
    return [pcie_acs_blocks_p2p]
