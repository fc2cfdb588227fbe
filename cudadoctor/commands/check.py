"""`cudadoctor check`: can PyTorch use the GPU? If not, why and the exact fix."""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Optional

import click

from .. import registry
from ..facts import sanitize
from ..probes import DEFAULT_TIMEOUTS, collect
from ._privacy import show_pii_option, warn_show_pii
from ._shared import (
    BadInput,
    check_format_option,
    emit,
    written as wrote,
    output_option,
    python_option,
    read_facts,
    read_text_arg,
    use_color,
)


def gather(
    facts_file: Optional[str],
    python: Optional[str],
    quick: bool,
    timeout: Optional[float],
    error: Optional[str],
    error_file: Optional[str],
    kernel: bool = True,
    deep: bool = False,
    from_collect_env: Optional[str] = None,
    from_text: Optional[str] = None,
) -> Dict[str, Any]:
    """Facts from a file, from collect_env output, from a pasted issue or from the live probes, plus the user's error text."""
    if from_text and (from_collect_env or facts_file or python):
        raise BadInput("--from-text is a source of facts on its own: not with --facts, --from-collect-env or --python")
    if from_collect_env and facts_file:
        raise BadInput("--from-collect-env and --facts cannot be used together: give one source of facts")
    if from_collect_env and python:
        raise BadInput("--from-collect-env and --python cannot be used together: the text already describes one interpreter")
    if from_text:
        facts = read_pasted_text(from_text)
    elif from_collect_env:
        facts = read_collect_env(from_collect_env)
    elif facts_file:
        facts = read_facts(facts_file)
    else:
        if python and not _is_interpreter(python):
            raise BadInput(f"--python {python}: not an executable file")
        timeouts = {"torch": timeout} if timeout else None
        facts = collect(python=python, quick=quick, kernel=kernel, timeouts=timeouts, deep=deep)
    text = error or ""
    if error_file:
        text = (text + "\n" if text else "") + read_text_arg(error_file, "an error message")
    attach_error(facts, text)
    return facts


def attach_error(facts: Dict[str, Any], text: str) -> None:
    """The user's error text into the facts (as check and triage both read it)."""
    if text.strip():
        # Text the user pasted around a collect_env report stays, after the error they name.
        around = (facts.get("user_error") or {}).get("text") if facts.get("origin") in ("collect_env", "text") else None
        text = text[-20000:]
        if isinstance(around, str) and around.strip() and len(text) < 19999:
            text = text + "\n" + around[: 20000 - len(text) - 1]
        facts["user_error"] = {"text": sanitize(text)}


def read_collect_env(path: str) -> Dict[str, Any]:
    """Facts from the text of `python -m torch.utils.collect_env` ('-' = stdin)."""
    from ..readers.collect_env import MAX_TEXT_CHARS, parse_collect_env
    from ..facts import FactsError

    text = read_text_arg(path, "the output of python -m torch.utils.collect_env", limit=MAX_TEXT_CHARS)
    try:
        return parse_collect_env(text)
    except FactsError as e:
        name = "stdin" if path == "-" else path
        raise BadInput(f"{name}: {e}") from None


def read_pasted_text(path: str) -> Dict[str, Any]:
    """Facts and error text from a whole pasted issue or ticket ('-' = stdin); see readers/issue.py."""
    from ..facts import FactsError
    from ..readers import issue

    text = read_text_arg(path, "a pasted issue or ticket text", limit=issue.MAX_TEXT_CHARS)
    try:
        return issue.read(text)["facts"]
    except FactsError as e:
        raise BadInput(f"{'stdin' if path == '-' else path}: {e}") from None


def _prepare_in_background(loading: "Callable[[], registry.Registry]", *modules: str) -> None:
    """Import what judges and renders the report, read the knowledge base, and give the built-in
    checks their first run, while the probes run: about 40 ms that would otherwise be paid after
    torch's import, on check's critical path.

    Only a head start: what fails here is done again, and fails properly, where it is used.
    """
    import importlib
    import threading

    def work() -> None:
        try:
            for m in modules:
                importlib.import_module(f"cudadoctor.{m}")
            from .. import kb

            kb.warm()
            _warm_checks(loading())
        except Exception:
            return

    threading.Thread(target=work, daemon=True, name="cudadoctor:imports").start()


def _warm_checks(reg: "registry.Registry") -> None:
    """Run each built-in check once on an empty facts document and discard what it says.

    A check's first run compiles its error-signature regexes and fills lazy caches (about 6 ms in
    all). Checks are pure, so the run has no effect but that. Plugins are left out: their code
    runs only for a real diagnosis.
    """
    from ..facts import Facts, new_facts

    fx = Facts(new_facts("live"))
    for c in reg.checks:
        if c.source.startswith(registry.BUILTIN_DIST + ":"):
            try:
                c(fx)
            except Exception:
                pass


def _is_interpreter(path: str) -> bool:
    import os

    return os.path.isfile(path) and os.access(path, os.X_OK)


@click.command("check")
@check_format_option
@output_option
@click.option(
    "--facts",
    "facts_file",
    metavar="FILE",
    help="Diagnose a saved facts file or JSON report ('-' for stdin) instead of this machine.",
)
@click.option(
    "--from-collect-env",
    "from_collect_env",
    metavar="FILE",
    help="Diagnose the pasted output of `python -m torch.utils.collect_env` (or vLLM's collect_env) in FILE ('-' for stdin).",
)
@click.option(
    "--from-text",
    "from_text",
    metavar="FILE",
    help="Diagnose a whole pasted issue or ticket in FILE ('-' for stdin): collect_env, nvidia-smi, deviceQuery, "
    "pip/conda lists and tracebacks, in any order (see docs/collect-env.md).",
)
@click.option("--error", "error", metavar="TEXT", help="The error message you saw; checks use it as evidence.")
@click.option(
    "--error-file", "error_file", metavar="FILE", help="Read the error message (or a whole traceback) from FILE ('-' for stdin)."
)
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
@click.option("-v", "--verbose", is_flag=True, help="Show the evidence of each finding and the probe timings.")
@python_option
@click.option("--quick", is_flag=True, help="Do not import torch (versions from package metadata only); well under a second.")
@click.option(
    "--deep", is_flag=True, help="Import torchvision/torchaudio fully (slower) instead of only loading their compiled extensions."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    metavar="SECONDS",
    help=f"Time limit for importing torch and initialising CUDA (default {DEFAULT_TIMEOUTS['torch']:.0f}).",
)
@show_pii_option
def check_cmd(
    fmt: str,
    output: Optional[str],
    facts_file: Optional[str],
    from_collect_env: Optional[str],
    from_text: Optional[str],
    error: Optional[str],
    error_file: Optional[str],
    strict: bool,
    verbose: bool,
    python: Optional[str],
    quick: bool,
    deep: bool,
    timeout: Optional[float],
    show_pii: bool,
) -> None:
    """Diagnose whether PyTorch can use the NVIDIA GPU, and print the fix for what is wrong.

    Exit codes: 0 no error findings; 1 error findings (with --strict, warnings too);
    2 usage error or bad input. Output is redacted unless --show-pii (see docs/support.md).
    """
    warn_show_pii(show_pii)
    t0 = time.perf_counter()
    loading = registry.load_in_background()  # checks load while the probes run
    _prepare_in_background(loading, "report", "privacy", "render", f"render.{fmt}")
    facts = gather(
        facts_file, python, quick, timeout, error, error_file, deep=deep, from_collect_env=from_collect_env, from_text=from_text
    )
    t1 = time.perf_counter()
    # Imported only now, so that the probes (torch's import is the long pole) start sooner.
    from ..privacy import shareable
    from ..render import render
    from ..report import diagnose

    reg = loading()
    report = diagnose(facts, reg, timings={"probes_s": t1 - t0, "plugins_wait_s": time.perf_counter() - t1})
    report = shareable(report, show_pii, live=True)
    written = emit(render(report, fmt, verbose=verbose, color=use_color(output)), output)
    from ..render.github import annotate

    annotate(report)  # GitHub Actions annotations on stderr, when GITHUB_ACTIONS=true
    code = report.exit_code(strict)
    if from_text:
        from ..readers.issue import summary

        click.echo(f"cudadoctor: {summary((facts.get('pasted') or {}).get('parts') or [])}", err=True)
    if written:
        first = next((f for f in report.findings if f.severity == "error"), None)
        wrote(written, report.verdict()["text"], f"{first.code}: {first.title}" if first else None)
    raise SystemExit(code)
