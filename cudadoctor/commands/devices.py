"""`cudadoctor devices`: what each GPU can do, whether it is healthy, whether PyTorch can use it."""

from __future__ import annotations

import time
from typing import Optional

import click

from .. import exitcodes, registry
from ..devices import build
from ..probes import DEFAULT_TIMEOUTS, collect
from ..render.devices import render_devices
from ..privacy import redactor_for, shareable
from ..report import diagnose
from ._privacy import show_pii_option, warn_show_pii
from ._shared import BadInput, emit, written as wrote, format_option, output_option, python_option, read_facts


@click.command("devices")
@format_option
@output_option
@click.option(
    "--facts",
    "facts_file",
    metavar="FILE",
    help="Report on a saved facts file or JSON report ('-' for stdin) instead of this machine.",
)
@click.option(
    "--from-text",
    "from_text",
    metavar="FILE",
    help="Report on a whole pasted issue or ticket in FILE ('-' for stdin): its nvidia-smi, deviceQuery and "
    "collect_env parts, as `cudadoctor check --from-text`.",
)
@click.option("--show-serials", is_flag=True, help="Show the GPUs' serial numbers (hidden by default: reports get shared).")
@python_option
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    metavar="SECONDS",
    help=f"Time limit for the NVML probe (default {DEFAULT_TIMEOUTS['nvml']:.0f}) and for the torch probe "
    f"(default {DEFAULT_TIMEOUTS['torch']:.0f}).",
)
@show_pii_option
def devices_cmd(
    fmt: str,
    output: Optional[str],
    facts_file: Optional[str],
    from_text: Optional[str],
    show_serials: bool,
    python: Optional[str],
    timeout: Optional[float],
    show_pii: bool,
) -> None:
    """Per GPU: deviceQuery's properties, NVML's health readings and PyTorch's view, with a verdict.

    Exit codes: 0 every GPU passed or could not be judged; 1 no NVIDIA GPU, or a GPU failed
    (lost, memory errors, its architecture missing from the PyTorch build, a failed test kernel);
    2 usage error or bad input.
    """
    warn_show_pii(show_pii)
    t0 = time.perf_counter()
    if from_text:
        from .check import gather

        facts = gather(facts_file, python, False, None, None, None, from_text=from_text)  # check's rules for mixing sources
    elif facts_file:
        facts = read_facts(facts_file)
    else:
        if python:
            import os

            if not (os.path.isfile(python) and os.access(python, os.X_OK)):
                raise BadInput(f"--python {python}: not an executable file")
        timeouts = {"nvml": timeout, "torch": timeout} if timeout else None
        facts = collect(python=python, timeouts=timeouts)
    t1 = time.perf_counter()
    report = diagnose(facts, registry.load(), timings={"probes_s": t1 - t0, "plugins_s": time.perf_counter() - t1})
    report = shareable(
        report,
        show_pii,
        live=True,
        redactor=None if show_pii else redactor_for([report.facts], live=True, keep_serials=show_serials),
    )
    model = build(report.facts, report.findings, show_serials=show_serials)
    emit(render_devices(model, fmt, show_serials=show_serials), output)
    failed = (
        not model["devices"] or bool(model.get("nvml_incomplete")) or any(d.get("result") == "FAIL" for d in model["devices"])
    )
    if output and output != "-":
        n = len(model["devices"])
        why = "; ".join(
            f"GPU {d.get('index')}: " + ", ".join(map(str, d.get("result_why") or ["FAIL"]))
            for d in model["devices"]
            if d.get("result") == "FAIL"
        ) or (None if n else "no NVIDIA GPU found")
        wrote(output, f"{n} GPU{'s' if n != 1 else ''}" + (", some FAIL" if failed and n else ""), why if failed else None)
    raise SystemExit(exitcodes.FINDINGS if failed else exitcodes.OK)
