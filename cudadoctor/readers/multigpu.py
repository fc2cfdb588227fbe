"""What a pasted report says about GPUs talking to each other (round 10, plat10): the entities behind
"collectives hang or give wrong results on a PCIe-only multi-GPU machine" (checks/plat10.py, pcie-acs-blocks-p2p).

NCCL's troubleshooting guide (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html,
sections "PCI Access Control Services (ACS)" and "GPU Direct") names the class: with PCIe ACS enabled on the
bridges (or the IOMMU / VT-d in translating mode), GPU-to-GPU peer traffic is redirected to the root complex;
CUDA P2P then hangs, crawls or corrupts data, so an all-reduce never finishes or returns garbage/NaN, and
``NCCL_P2P_DISABLE=1`` (shared memory instead of P2P) "works". A report shows the class by its entities, in any
words: several GPUs and a collective (NCCL, all-reduce, DDP, MirroredStrategy, nccl-tests), a symptom (hang,
deadlock, freeze, NaN, wrong results) or the P2P workaround, a PCIe path (PCIe, a topology entry PHB/PXB/PIX,
"no NVLink", P2P), and sometimes the evidence itself (ACSCtl, pci=noacs, IOMMU, VT-d). An NVLink path (NV# in
`nvidia-smi topo -m`, SXM boards, NVSwitch) is recorded too: there, P2P does not cross PCIe bridges.

:func:`read` returns ``{collective, symptom, p2p, pcie, acs, nvlink, workaround, multinode, contrast, pcie_board}``
(each ``{line, text}`` or absent) or None: contrast is the same work running on one GPU or over gloo, pcie_board a
GPU sold only as a PCIe board. Pure function of the text: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, Optional

MAX_LINE = 2000

#: Several GPUs working together: a collective library or API, or a count of GPUs.
_COLLECTIVE = re.compile(
    r"\bNCCL\b|\bnccl(?:AllReduce|Broadcast|AllGather|ReduceScatter|CommInitRank)\b|all[_ -]?reduce|all[_ -]?gather|"
    r"\bDDP\b|DistributedDataParallel|MirroredStrategy|nccl-tests|\bHorovod\b|"
    r"\bmulti[- ]?gpus?\b|\bmultiple[- ](?:\w+[- ])?gpus?\b|\b(?:[2-9]|1[0-6])\s*(?:or more\s+)?(?:\w+\s+){0,2}GPUs\b|"
    r"\b[2-9]\s*x\s*(?:NVIDIA\s+)?(?:GeForce\s+)?(?:RTX|GTX|Tesla|Quadro|A\d{2,4}|L\d{1,2}|V100|P100|T4)\b|"
    r"多\s*(?:GPU|卡|显卡|张(?:显)?卡)|マルチ\s*GPU|複数\s*(?:の)?\s*GPU|"
    # a tensor copied from one GPU to another (session 23, b156: pytorch#84803's x.to(1), "Moving a tensor across CUDA
    # devices"): CUDA's peer-to-peer copy, the path ACS redirects
    r"\.to\(\s*['\"]?cuda:[1-9]|\.to\(\s*[1-9]\s*\)|\bbetween\s+(?:the\s+)?GPUs\b|\bacross\s+CUDA\s+devices\b|"
    r"\bfrom\s+one\s+GPU\s+to\s+another\b|\bGPU[- ]to[- ]GPU\b|cudaMemcpyPeer",
    re.I,
)
#: What goes wrong when P2P traffic is redirected: no progress, or corrupt data.
_SYMPTOM = re.compile(
    r"\b(?:hangs?|hanging|hung|stuck|freez\w*|froze|deadlock\w*|stall\w*|spin-wait\w*|no forward progress|"
    r"never (?:finish|complete|return)\w*|wrong results?|incorrect results?|garbage|(?:is|are|got|get|have|has)\s+`?nan`?s?\b|"
    r"`?nan`?\s+(?:in|loss|errors?|values?)|loss (?:becomes|is|goes to) nan|(?:silent\s+)?data corruption|"
    r"(?:gets?|got|returns?|returned|gives?)\s+(?:a\s+)?zeros?(?:\s+tensor)?\b|\bzero tensor\b)|挂起|卡住|卡死|停止响应|フリーズ|止まる",
    re.I,
)
#: The same work running on one GPU, or over gloo (sockets, no P2P), in the reporter's words (session 21): the
#: contrast that points at GPU-to-GPU traffic rather than at the program ("stuck with multi-GPUs, but works with a
#: single GPU", "stuck with backend nccl, but works with gloo", "单GPU时则没有问题").
_CONTRAST = re.compile(
    r"\b(?:works?|working|worked|runs?|running|fine|ok(?:ay)?|no (?:problems?|issues?))\b[^\n]{0,40}?"
    r"\b(?:(?:a|one|1)\s+(?:single\s+)?(?:gpu|card)|single[- ](?:gpu|card)|(?:with|on|using)\s+`?gloo)\b|"
    r"\bsingle[- ]gpu\b[^\n]{0,30}?\b(?:works?|fine|ok(?:ay)?|no (?:problems?|issues?))\b|"
    r"单\s*(?:GPU|卡|显卡)[^\n]{0,12}?(?:没有问题|没问题|正常|可以)|非并行方式|"
    # the same copy right when it goes through the CPU (session 23, b156)
    r"\bmov\w*\s+(?:\w+\s+){0,3}to\s+(?:the\s+)?CPU\b|\.to\(\s*['\"]cpu['\"]\s*\)\.to\(|\b(?:via|through)\s+(?:the\s+)?CPU\b",
    re.I,
)
#: A GPU sold only as a PCIe board (GeForce, TITAN, Quadro and RTX workstation cards, T4/L4/L40/A10/A40): several
#: of them talk over PCIe unless an NVLink bridge is named (recorded as nvlink).
_PCIE_BOARD = re.compile(
    r"\b(?:GeForce|TITAN\s+(?:X|V|RTX|Xp)|Quadro|RTX\s*(?:[2-5]0[5-9]0|A[2-6]000|[4-6]000(?:\s+Ada)?|PRO\s+\d{4})|"
    r"GTX\s*\d{3,4}|(?:Tesla\s+|NVIDIA\s+)?(?:T4|L4|L40S?|A10|A40|A16|A2)(?![\w-]))\b",
    re.I,
)
#: The P2P workaround NCCL's guide gives: disabling P2P (or limiting it to NVLink) makes it work.
_WORKAROUND = re.compile(r"NCCL_P2P_(?:DISABLE\s*=?\s*1|LEVEL\s*=?\s*(?:LOC|NVL|0))", re.I)
_P2P = re.compile(r"\bP2P\b|peer[- ]to[- ]peer|Access Peer|NCCL_P2P_", re.I)
#: A PCIe path between the GPUs (nvidia-smi topo -m's legend: PIX, PXB, PHB, NODE, SYS are PCIe; NV# is NVLink).
_PCIE = re.compile(r"\bPCI-?e\b|\bPCIe\s*(?:Gen)?\s*\d|\bPHB\b|\bPXB\b|\bPIX\b|\b(?:no|without)\s+NVLink\b", re.I)
#: The cause itself shown: the ACS control register, the kernel options that clear it, the IOMMU in between.
_ACS = re.compile(
    r"\bACSCtl\b|\bACS\b(?:\s+(?:is\s+)?(?:enabled|on|control))?|pci=noacs|ECAP_ACS|pcie_acs_override|\bIOMMU\b|iommu=|"
    r"intel_iommu|amd_iommu|\bVT-d\b|\bAMD-Vi\b",
)
#: An NVLink path: NV1..NV18 entries of `nvidia-smi topo -m`, NVSwitch, SXM boards; "no NVLink" is not one.
_NVLINK = re.compile(
    r"(?<![\w-])NV(?:[1-9]|1[0-8])(?![\w-])|\bNVSwitch\b|\bSXM\d?\b|(?<!no )(?<!without )\bNVLink\b(?! bridge not)", re.I
)
_NO_NVLINK = re.compile(r"\b(?:no|without|not using|not)\s+(?:an?\s+)?NVLink", re.I)
#: Several machines in one job (session 18): torchrun's / torch.distributed.launch's node count and rank, or the
#: reporter's words ("two nodes", "multi-node", "across machines"). NCCL then talks over the network between nodes.
_MULTINODE = re.compile(
    r"--nnodes[= ]\s*(?:[2-9]|[1-9]\d+)\b|--nnodes[= ]\s*\d+:\d+|--node[_-]rank[= ]\s*[1-9]|"
    r"\b(?:two|three|four|several|multiple|[2-9])\s+(?:gpu\s+)?(?:nodes?|machines|servers|hosts)\b|"
    r"\bmulti[- ]?(?:nodes?|machines?|hosts?)\b|\bacross\s+(?:\w+\s+)?(?:nodes|machines|servers|hosts)\b|"
    # DeepSpeed's launcher, two DGX systems, Chinese "multi-machine" / "two nodes" (session 23, b156)
    r"--num_nodes[= ]\s*(?:[2-9]|[1-9]\d+)\b|--hostfile\b|\b[2-9]\s*x\s*DGX\b|多机|[两二三四五六七八多]\s*个?\s*(?:节点|台(?:机器|服务器))",
    re.I,
)


def read(lines: Iterable[str]) -> Optional[Dict[str, Any]]:
    """The multi-GPU entities the lines show (first line of each), or None when no collective is named."""
    got: Dict[str, Dict[str, Any]] = {}
    pats = (
        ("collective", _COLLECTIVE),
        ("symptom", _SYMPTOM),
        ("workaround", _WORKAROUND),
        ("p2p", _P2P),
        ("pcie", _PCIE),
        ("acs", _ACS),
        ("multinode", _MULTINODE),
        ("contrast", _CONTRAST),
        ("pcie_board", _PCIE_BOARD),
    )
    for n, raw in enumerate(lines, 1):
        line = raw[:MAX_LINE]
        for name, pat in pats:
            if name not in got:
                m = pat.search(line)
                if m:
                    got[name] = {"line": n, "text": line.strip()[:300], "said": m.group(0)}
        if "nvlink" not in got and not _NO_NVLINK.search(line):
            m = _NVLINK.search(line)
            if m:
                got["nvlink"] = {"line": n, "text": line.strip()[:300], "said": m.group(0)}
    if "collective" not in got:
        return None
    return got


def fill(facts: Dict[str, Any], got: Optional[Dict[str, Any]]) -> bool:
    """Record ``got`` as ``pasted.multi_gpu``; returns whether anything was recorded."""
    if not got:
        return False
    facts.setdefault("pasted", {})["multi_gpu"] = dict(got)
    return True
