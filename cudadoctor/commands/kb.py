"""`cudadoctor kb`: the knowledge base tables, their sources and the date each was checked; and the
questions the tables answer: `kb driver 12.8`, `kb arch sm_120`, `kb pair torch 2.6`, `kb gpu "RTX 4090"`."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import click

from .. import kb
from ..render.kb import render_answer, render_kb
from ._shared import BadInput

_format = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
# A question's --format; when not given, `kb --format json driver 12.8` (the group's) holds.
_q_format = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None, help="text (the default) or json.")


def _answer(ask: Callable[..., Dict[str, Any]], fmt: Optional[str], *args: str) -> None:
    from ..kb.answers import QueryError

    if fmt is None:
        parent = click.get_current_context().parent
        fmt = (parent.params.get("fmt") if parent is not None else None) or "text"

    try:
        answer = ask(*args)
    except QueryError as e:
        raise BadInput(str(e)) from None
    click.echo(render_answer(answer, fmt), nl=False)


@click.group("kb", invoke_without_command=True)
@_format
@click.pass_context
def kb_cmd(ctx: click.Context, fmt: str) -> None:
    """Show the compatibility tables cudadoctor judges by, with their sources and dates, or ask them a question.

    A wrong table is a wrong diagnosis: every table names where its facts come from.

    \b
    cudadoctor kb driver 12.8            minimum driver for a CUDA release (Linux, Windows)
    cudadoctor kb driver 570.124.04      the CUDA a driver supports, the wheel variants it runs
    cudadoctor kb arch sm_120            the GPUs and the official wheels that have an architecture
    cudadoctor kb pair torch 2.6         the torchvision and torchaudio that go with a torch
    cudadoctor kb pair torchvision 0.21  (or torchaudio): the torch it goes with
    cudadoctor kb gpu "RTX 4090"         a GPU's compute capability and the wheels that run it

    Exit codes: 0 answered; 2 a question the tables cannot answer, or bad arguments.
    """
    if ctx.invoked_subcommand is None:
        newest: Optional[str] = None if fmt == "json" else kb.newest_release()
        click.echo(render_kb(kb.kb_date(), newest, kb.tables(), fmt), nl=False)


@kb_cmd.command("driver")
@click.argument("version")
@_q_format
def driver_cmd(version: str, fmt: Optional[str]) -> None:
    """The minimum NVIDIA driver for a CUDA VERSION (12.8), or what a driver VERSION (570.124.04) supports."""
    from ..kb import answers

    _answer(answers.driver, fmt, version)


@kb_cmd.command("arch")
@click.argument("arch")
@_q_format
def arch_cmd(arch: str, fmt: Optional[str]) -> None:
    """The GPUs and the official PyTorch wheels that have an architecture: sm_120, compute_90, 8.6."""
    from ..kb import answers

    _answer(answers.arch, fmt, arch)


@kb_cmd.command("pair")
@click.argument("package", type=click.Choice(["torch", "torchvision", "torchaudio"], case_sensitive=False))
@click.argument("version")
@_q_format
def pair_cmd(package: str, version: str, fmt: Optional[str]) -> None:
    """The torch, torchvision and torchaudio releases that go together, from one of them: pair torch 2.6."""
    from ..kb import answers

    _answer(answers.pair, fmt, package, version)


@kb_cmd.command("gpu")
@click.argument("name")
@_q_format
def gpu_cmd(name: str, fmt: Optional[str]) -> None:
    """A GPU's compute capability, by the name nvidia-smi or torch prints ("RTX 4090", "A100-SXM4-80GB")."""
    from ..kb import answers

    _answer(answers.gpu, fmt, name)
