"""`cudadoctor smoke`: prove end-to-end GPU acceleration by training MNIST in a watched child process."""

from __future__ import annotations

import os
import sys
from typing import Optional

import click

from ..privacy import Redactor, redactor_for
from ..render.prometheus import smoke_metrics
from ..render.smoke import render
from ..smoke.gate import smoke_with_diagnosis
from ._privacy import show_pii_option, warn_show_pii
from ._shared import BadInput, emit, failure_reason, format_option, output_option, python_option
from ._shared import written as wrote
from ._smoke_policy import exit_code_for

DEFAULT_TIMEOUT_S = 300.0


def _device(ctx, param, value: str) -> str:
    v = value.strip().lower()
    if v in ("cuda", "cpu", "all") or (v.startswith("cuda:") and v[5:].isdigit()):
        return v
    raise click.BadParameter("expected cuda, cuda:N, all or cpu")


@click.command("smoke")
@click.option(
    "--device",
    default="cuda",
    show_default=True,
    callback=_device,
    metavar="cuda|cuda:N|all|cpu",
    help="Where to run: a GPU, every visible GPU (all), or the CPU (to check the workload itself).",
)
@click.option("--data-dir", metavar="DIR", help="Where MNIST is (DIR/MNIST/raw/*-ubyte[.gz], the torchvision layout).")
@click.option(
    "--download", is_flag=True, help="Download MNIST into --data-dir (or the cache) even where a copy is found elsewhere."
)
@click.option(
    "--offline",
    is_flag=True,
    help="Never use the network: MNIST missing is an error (by default smoke downloads it, 11 MB, into "
    "~/.cache/cudadoctor/data; $CUDADOCTOR_MNIST_MIRROR names a mirror of your own).",
)
@click.option("--synthetic", is_flag=True, help="Train on generated seven-segment digits instead of MNIST (bar 95%).")
@click.option("--epochs", type=click.IntRange(min=1), metavar="N", help="Most epochs to train (stops early at the bar).")
@format_option
@output_option
@python_option
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    metavar="SECONDS",
    help="Watchdog: the whole workload is killed after this long.",
)
@click.option("--progress/--no-progress", default=None, help="Progress bars on stderr (default: when stderr is a terminal).")
@click.option(
    "--distributed",
    is_flag=True,
    help="Run as one rank of a torchrun (or srun) launch: every rank checks its device, then the job "
    "trains the MNIST network with DistributedDataParallel to the bar, checks exact all-reduce "
    "and broadcast, sweeps all-reduce bandwidth (algbw/busbw) and names any rank at fault within "
    "--rank-timeout; rank 0 writes ONE job report (docs/smoke.md).",
)
@click.option(
    "--per-rank",
    is_flag=True,
    help="With --distributed: every rank also writes its own file, FILE.rankN.json beside -o FILE.json (for `cudadoctor fleet`).",
)
@click.option(
    "--backend",
    type=click.Choice(["auto", "nccl", "gloo"]),
    default=None,
    help="With --distributed: the process group's backend [default: $CUDADOCTOR_SMOKE_BACKEND, else auto: NCCL for "
    "--device cuda, Gloo for cpu]. Gloo with --device cuda runs on CUDA tensors; with more ranks on a host than "
    "GPUs, ranks then share GPUs (cuda:LOCAL_RANK % GPUs).",
)
@click.option("--combined", is_flag=True, hidden=True)  # the old name of --distributed's default; a no-op
@click.option(
    "--rank-timeout",
    type=click.FloatRange(min=1),
    default=None,
    metavar="SECONDS",
    help="With --distributed: how long to wait for another rank (check-in, each collective, results) [default: 60].",
)
@show_pii_option
def smoke_cmd(
    device: str,
    data_dir: Optional[str],
    download: bool,
    synthetic: bool,
    epochs: Optional[int],
    fmt: str,
    output: Optional[str],
    python: Optional[str],
    timeout: float,
    progress: Optional[bool],
    distributed: bool = False,
    per_rank: bool = False,
    combined: bool = False,
    rank_timeout: Optional[float] = None,
    show_pii: bool = False,
    backend: Optional[str] = None,
    offline: bool = False,
) -> None:
    """Train the MNIST MLP on the GPU and check every stage: device, CPU agreement, training to 97%,
    throughput vs CPU, mixed precision, cuDNN and host<->device bandwidth.

    Exit codes: 0 every stage passed; 1 a stage failed (including a crash or a hang of the workload);
    2 bad input (MNIST missing or corrupt, bad --python); 3 internal error.
    """
    warn_show_pii(show_pii)
    if python and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise BadInput(f"--python {python}: not an executable file")
    if synthetic and download:
        raise BadInput("--synthetic and --download exclude each other")
    if offline and download:
        raise BadInput("--offline and --download exclude each other")
    if (combined or per_rank or rank_timeout is not None) and not distributed:
        raise BadInput("--per-rank and --rank-timeout go with --distributed")
    if backend and not distributed:
        raise BadInput("--backend goes with --distributed")
    if distributed and fmt == "prometheus":
        raise BadInput(
            "--format prometheus is for the single-GPU smoke; for --distributed, read its JSON with "
            "`cudadoctor fleet DIR --format prometheus`"
        )
    if distributed:
        from ._smoke_distributed import run_distributed_cmd

        run_distributed_cmd(
            device, data_dir, download, synthetic, epochs, fmt, output, python, timeout, rank_timeout, per_rank, show_pii, backend
        )
    if progress is None:
        try:
            progress = sys.stderr.isatty() and not os.environ.get("NO_COLOR")  # nothing extra in pipes, files, NO_COLOR
        except (AttributeError, ValueError):
            progress = False
    from ..probes.interpreter import choose

    python = choose(python)[0]  # as check does: an isolated install trains with the user's active environment
    # A GPU that cannot be used is diagnosed the way `check` does, with its fix, once the workload's
    # device stage has failed (never before it: a healthy GPU imports torch once).
    result = smoke_with_diagnosis(python, device, data_dir, download, synthetic, epochs, timeout, progress, fetch=not offline)
    result = (Redactor(pii=False) if show_pii else redactor_for([], live=True)).redact(result)
    written = emit(smoke_metrics(result) if fmt == "prometheus" else render(result, fmt), output)
    if written:
        wrote(written, str(result.get("status")), failure_reason(result), "smoke")
    raise SystemExit(exit_code_for(result))
