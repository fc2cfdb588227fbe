"""`cudadoctor smoke --distributed`: one rank of a torchrun / srun launch (cudadoctor/smoke/distributed.py).

Rank 0 prints or writes the job report (kind cudadoctor-smoke-job); with --per-rank every rank also
writes its own file (kind cudadoctor-smoke-rank): to -o when it holds the {rank} placeholder (the job
report then goes where {rank} reads "job"), else FILE.rankN.json beside -o FILE.json, else
cudadoctor-smoke.rankN.json in the working directory.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

import click

from ._shared import BadInput, emit


def rank_path(output: Optional[str], rank: int) -> str:
    if output and "{rank}" in output:
        return output  # emit() expands {rank} (and {host}...) for this rank
    if not output or output == "-":
        return f"cudadoctor-smoke.rank{rank}.json"
    root, ext = os.path.splitext(output)
    return f"{root}.rank{rank}{ext or '.json'}"


def _check_data(cfg: Dict[str, Any]) -> None:
    """Every rank trains: a missing data set is bad input on the rank that lacks it, before the job starts."""
    from ..smoke import data

    try:
        data.locate(cfg, {})
    except data.DataError as e:
        raise BadInput(e.message.splitlines()[0] + " (--data-dir DIR, or --synthetic)") from None


def run_distributed_cmd(
    device: str,
    data_dir: Optional[str],
    download: bool,
    synthetic: bool,
    epochs: Optional[int],
    fmt: str,
    output: Optional[str],
    python: Optional[str],
    timeout: float,
    rank_timeout: Optional[float],
    per_rank: bool,
    show_pii: bool = False,
    backend: Optional[str] = None,
) -> None:
    from ..smoke.distributed import DEFAULT_RANK_TIMEOUT_S, LaunchError, choose_backend, launch_info, run_distributed
    from ..smoke.job import rank_document
    from ..render.smoke import render
    from ._smoke_policy import exit_code_for, shareable_distributed

    if device not in ("cuda", "cpu"):
        raise BadInput("--distributed takes --device cuda (each rank uses cuda:LOCAL_RANK, NCCL) or cpu (Gloo)")
    if download:
        raise BadInput(
            "--download does not go with --distributed: download once (cudadoctor smoke --download "
            "--device cpu), then give every rank --data-dir"
        )
    try:
        # --backend, else CUDADOCTOR_SMOKE_BACKEND, else auto (NCCL for cuda, Gloo for cpu)
        chosen = choose_backend(device, backend or os.environ.get("CUDADOCTOR_SMOKE_BACKEND"))
    except LaunchError as e:
        raise BadInput(str(e) if backend else f"CUDADOCTOR_SMOKE_BACKEND: {e}") from None
    cfg = {
        "device": device,
        "backend": chosen,
        "rank_timeout_s": rank_timeout or DEFAULT_RANK_TIMEOUT_S,
        "timeout_s": timeout,
        "data_dir": os.path.abspath(os.path.expanduser(data_dir)) if data_dir else None,
        "synthetic": synthetic,
        "epochs": epochs,
    }
    try:
        info = launch_info(os.environ)
    except LaunchError as e:
        raise BadInput(str(e)) from None
    _check_data(cfg)
    report, code, row = run_distributed(cfg, python)
    if per_rank:
        from ..document import dumps

        doc = shareable_distributed(rank_document(row, info, chosen), show_pii)
        emit(dumps(doc), rank_path(output, info["rank"]))
        output = output.replace("{rank}", "job") if output else output
    if report is not None:  # rank 0
        report = shareable_distributed(report, show_pii)
        written = emit(render(report, fmt), output)
        if written:
            click.echo(f"cudadoctor smoke --distributed: {report.get('status')} (report written to {written})", err=True)
        code = exit_code_for(report)
    raise SystemExit(code)
