"""Distributed training failures that are not the GPUs' fault (session 18, from blind batch b63):

- nccl-unavailable-on-windows: "Distributed package doesn't have NCCL built in": torch's Windows (and macOS) builds
  ship no NCCL; multi-GPU training there needs the gloo backend (torch.distributed's docs: NCCL is Linux-only).
- program-pins-all-ranks-to-one-gpu: NCCL's "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device X"
  (init.cc): every process of the job chose the same GPU (a hard-coded device or CUDA_VISIBLE_DEVICES, no
  torch.cuda.set_device(local_rank)).
- nccl-wrong-network-interface: a job across several machines that hangs at its first collective or fails with NCCL's
  "unhandled system error": NCCL's bootstrap/socket transport picked an interface the other node cannot reach
  (docker0, a bridge, a second NIC); NCCL_SOCKET_IFNAME names the right one (NCCL's troubleshooting guide).
  A warning: the multi-node context comes from the reader (readers/multigpu.py), not from an error's own words.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import search, text_finding

NCCL_UNAVAILABLE_ON_WINDOWS = Code(
    code="nccl-unavailable-on-windows",
    title="torch on Windows (or macOS) has no NCCL: use the gloo backend",
    area="torch",
    severity="error",
    explanation={
        "what": "Multi-GPU or distributed training stops with \"RuntimeError: Distributed package doesn't have NCCL "
        'built in" (Lightning, accelerate, torchrun with backend="nccl").',
        "why": "PyTorch's Windows and macOS builds are made without NCCL (torch.distributed's documentation: NCCL is "
        "supported on Linux only); only the gloo backend exists there.",
        "confirm": 'python -c "import torch.distributed as d; print(d.is_nccl_available(), d.is_gloo_available())"  '
        "# False True on Windows",
        "fix": 'Use the gloo backend: init_process_group(backend="gloo"); Lightning: strategy=DDPStrategy('
        'process_group_backend="gloo") (or PL_TORCH_DISTRIBUTED_BACKEND=gloo where the project does not name nccl); '
        "or train on Linux / WSL 2 for NCCL.",
    },
    links=(
        "https://pytorch.org/docs/stable/distributed.html#backends",
        "https://github.com/pytorch/pytorch/blob/v2.1.0/torch/distributed/distributed_c10d.py",
    ),
)

PROGRAM_PINS_ALL_RANKS_TO_ONE_GPU = Code(
    code="program-pins-all-ranks-to-one-gpu",
    title="Every process of the distributed job uses the same GPU (NCCL: Duplicate GPU detected)",
    area="gpu",
    severity="error",
    explanation={
        "what": 'NCCL refuses to start: "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device X" (ncclInvalidUsage).',
        "why": "Each rank must use its own GPU. A device hard-coded in the program (cuda:0, a default GPU left from "
        "debugging), one CUDA_VISIBLE_DEVICES for all ranks, or no torch.cuda.set_device(local_rank) puts every "
        "process on one GPU, which NCCL does not allow.",
        "confirm": "Print torch.cuda.current_device() and os.environ['LOCAL_RANK'] in each process: all show the same GPU.",
        "fix": 'Select the GPU from the rank: torch.cuda.set_device(int(os.environ["LOCAL_RANK"])) before '
        "init_process_group, and remove any fixed device or per-job CUDA_VISIBLE_DEVICES from the program.",
    },
    links=(
        "https://github.com/NVIDIA/nccl/blob/v2.18.3-1/src/init.cc",
        "https://pytorch.org/tutorials/intermediate/ddp_tutorial.html",
    ),
)

NCCL_WRONG_NETWORK_INTERFACE = Code(
    code="nccl-wrong-network-interface",
    title="A job across machines hangs or fails in NCCL: it uses a network interface the other node cannot reach",
    area="system",
    severity="warning",
    explanation={
        "what": "Training across two or more machines hangs at the first collective (no error), or fails with NCCL's "
        "'unhandled system error' / socket errors, while each machine alone works.",
        "why": "NCCL picks the network interface for its bootstrap and socket transport itself; on machines with "
        "several (docker0 or another bridge, a VPN, a second NIC, a container's own network) it can pick one the "
        "other node cannot reach (NCCL's troubleshooting guide: NCCL_SOCKET_IFNAME).",
        "confirm": "NCCL_DEBUG=INFO on every node: the 'NET/Socket : Using ...' and 'Bootstrap : Using ...' lines name "
        "the interface; `ip addr` shows whether the other node can reach that address.",
        "fix": "export NCCL_SOCKET_IFNAME=<the interface the nodes share, e.g. eth0> (and GLOO_SOCKET_IFNAME) on every "
        "node; in containers run with --network=host; with no InfiniBand, NCCL_IB_DISABLE=1.",
    },
    links=(
        "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
        "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname",
    ),
)

_NCCL_NET_FAIL = (
    r"unhandled system error|ncclSystemError|NCCL WARN (?:NET/Socket|Net ?:|Bootstrap|socket)|Connection (?:refused|timed out)|"
    # ProcessGroupNCCL's watchdog when a collective never completes: across machines, the hang's wording (session 19)
    r"Some NCCL operations have failed or timed out|Watchdog caught collective operation timeout|"
    r"WorkNCCL\([^)]{0,200}\) ran for \d+ milliseconds before timing out|"
    # ncclRemoteError's message (NCCL 2.13+), and NCCL failing at start-up across machines (session 23, b156)
    r"remote process exited or there was a network error|\bNCCL\b[^\n]{0,20}\bfail(?:s|ed|ing)?\b[^\n]{0,40}\b(?:start|init|bootstrap)\w*"
)


@check(NCCL_UNAVAILABLE_ON_WINDOWS)
def nccl_unavailable_on_windows(fx: Facts) -> Iterator[Finding]:
    yield from text_finding(
        NCCL_UNAVAILABLE_ON_WINDOWS,
        fx,
        "This torch has no NCCL (Windows and macOS builds ship none): use the gloo backend",
        (
            'python -c "import torch.distributed as d; print(d.is_nccl_available(), d.is_gloo_available())"',
            'torch.distributed.init_process_group(backend="gloo")  # Lightning: DDPStrategy(process_group_backend="gloo")',
            "# or train on Linux / WSL 2, where torch has NCCL",
        ),
        "PyTorch builds NCCL only on Linux; on Windows and macOS the gloo backend is the one there.",
    )


@check(PROGRAM_PINS_ALL_RANKS_TO_ONE_GPU)
def program_pins_all_ranks_to_one_gpu(fx: Facts) -> Iterator[Finding]:
    yield from text_finding(
        PROGRAM_PINS_ALL_RANKS_TO_ONE_GPU,
        fx,
        "Two ranks of the job are on the same GPU: the program does not choose the GPU from the rank",
        (
            'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # before init_process_group, in every process',
            "# remove a fixed device (cuda:0, a default GPU id) or a single CUDA_VISIBLE_DEVICES set for all ranks",
        ),
        "NCCL needs one GPU per rank.",
    )


@check(NCCL_WRONG_NETWORK_INTERFACE)
def nccl_wrong_network_interface(fx: Facts) -> Iterator[Finding]:
    got = fx.dict("pasted.multi_gpu") or {}
    nodes = got.get("multinode")
    if not isinstance(nodes, dict):
        return
    failed = search(fx, _NCCL_NET_FAIL)
    hang = got.get("symptom") if isinstance(got.get("symptom"), dict) else None
    if not failed and not (
        hang and re.search(r"hang|hung|stuck|block|freez|froze|never|挂起|卡住|卡死|フリーズ|止まる", str(hang.get("said")), re.I)
    ):
        return
    yield NCCL_WRONG_NETWORK_INTERFACE.finding(
        title="Likely: the job across machines cannot connect: NCCL uses a network interface the other node cannot reach",
        evidence={
            "several machines": nodes.get("text"),
            **({failed[0]: failed[1]} if failed else {"symptom": (hang or {}).get("text")}),
        },
        fix=Fix(
            (
                "NCCL_DEBUG=INFO torchrun ...  # on each node: 'NET/Socket : Using <if>' names the interface NCCL chose",
                "export NCCL_SOCKET_IFNAME=<interface the nodes share, e.g. eth0> GLOO_SOCKET_IFNAME=<same>  # on every node",
                "# in Docker: --network=host; without InfiniBand: export NCCL_IB_DISABLE=1",
            ),
            "NCCL chooses the interface itself; with several (docker0, VPN, a second NIC) it may choose one the other "
            "node cannot reach.",
        ),
    )


def register():
    return [nccl_unavailable_on_windows, program_pins_all_ranks_to_one_gpu, nccl_wrong_network_interface]
