"""`cudadoctor smoke --distributed`: one rank of a torchrun / srun launch (cudadoctor/smoke/distributed.py)."""

from __future__ import annotations

import sys
from typing import Optional

import click

from ._shared import BadInput, emit


def run_distributed_cmd(device: str, data_dir: Optional[str], download: bool, synthetic: bool, epochs: Optional[int],
                        fmt: str, output: Optional[str], python: Optional[str], timeout: float,
                        show_pii: bool = False) -> None:
    import os

    from ..smoke.distributed import RendezvousError, render, rendezvous, run_distributed

    if data_dir or download or synthetic or epochs:
        raise BadInput("--distributed checks the process group, collectives and DDP; "
                       "--data-dir, --download, --synthetic and --epochs do not apply")
    if device not in ("cuda", "cpu"):
        raise BadInput(f"--distributed --device {device}: use cuda (each rank takes cuda:LOCAL_RANK) or cpu (gloo)")
    try:
        rdzv = rendezvous(os.environ)
    except RendezvousError as e:
        raise BadInput(str(e)) from None
    interpreter = python or sys.executable
    result = None
    if device == "cuda":
        from .smoke import diagnosis_gate

        gate = diagnosis_gate(interpreter, device)
        if gate is not None:
            result = dict(gate, kind="cudadoctor-smoke-distributed",
                          distributed={**rdzv, "host": _host(), "backend": None})
    if result is None:
        result = run_distributed(interpreter, device, timeout, rdzv)
    from .smoke import shareable_distributed

    result = shareable_distributed(result, show_pii)
    written = emit(render(result, fmt), output)
    if written:
        click.echo(f"cudadoctor smoke --distributed: rank {rdzv['rank']}: {result.get('status')} "
                   f"(report written to {written})", err=True)
    from .smoke import exit_code_for

    raise SystemExit(exit_code_for(result))


def _host() -> str:
    import socket

    return socket.gethostname()
