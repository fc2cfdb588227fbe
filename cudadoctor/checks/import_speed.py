"""Is `import torch` slow for a reason the machine can fix? Compiling from source at every start, or a
network filesystem under site-packages.

Code: torch-import-slow. Reads what the torch probe measured around its own import (``torch.bytecode``:
modules compiled from source and the seconds spent, whether their caches could be written, the filesystem).
"""

from __future__ import annotations

import os
from typing import Iterator, List, Optional

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

#: Compiling counts when it took at least this long and this share of the import.
COMPILE_S, COMPILE_SHARE = 1.0, 0.25
#: A network filesystem counts when the import took at least this long (a local import of torch takes 1-4 s).
NETWORK_IMPORT_S = 5.0

TORCH_IMPORT_SLOW = Code(
    code="torch-import-slow",
    title="`import torch` is slow for a reason this machine can fix",
    area="torch",
    severity="warning",
    explanation={
        "what": "Importing torch took far longer than it needs to, and the cause was measured: torch's modules were "
        "compiled from source (no current bytecode cache, `__pycache__/*.pyc`) and their caches cannot be written, "
        "so every process pays it again; or torch's site-packages lies on a network filesystem (NFS, Lustre, GPFS, "
        "CIFS, 9p, FUSE), where each of the thousands of files an import opens is a round trip.",
        "why": "torch imports about 1,500 modules. Compiling them from source costs seconds (5.3 s of a 12.6 s start "
        "on an H100 image whose site-packages had no bytecode cache). Caches are missing when an installer did not "
        "write them (uv without `--compile-bytecode`, some image builds that delete `__pycache__`) and cannot be "
        "written when site-packages is read-only for the user (a shared cluster environment, a read-only image "
        "layer) or `PYTHONDONTWRITEBYTECODE` is set. On a network filesystem the metadata round trips dominate.",
        "confirm": "`python -X importtime -c 'import torch' 2>&1 | tail`; "
        "`PYTHONDONTWRITEBYTECODE= python -c 'import torch'` twice (the second is fast when caches can be written); "
        "`find $(python -c 'import torch, os; print(os.path.dirname(torch.__file__))') -name '*.pyc' | wc -l`; "
        "`stat -f -c %T <site-packages>` for the filesystem type.",
        "fix": "Write the caches once, as the environment's owner or at image build time: `python -m compileall -q -j 0 "
        "<site-packages>` (with uv: `uv pip install --compile-bytecode …` or `UV_COMPILE_BYTECODE=1`); unset "
        "`PYTHONDONTWRITEBYTECODE`. For a network filesystem: copy the environment to local disk (conda-pack, a "
        "venv on local NVMe) or ship it in a container image.",
    },
    links=(
        "https://docs.python.org/3/library/compileall.html",
        "https://docs.astral.sh/uv/guides/integration/docker/#compiling-bytecode",
        "https://docs.python.org/3/using/cmdline.html#envvar-PYTHONDONTWRITEBYTECODE",
    ),
)


def _site(fx: Facts) -> Optional[str]:
    loc = fx.str("torch.location")
    return os.path.dirname(os.path.dirname(loc)) if loc else None  # .../site-packages/torch/__init__.py


def _compile_cause(fx: Facts) -> Optional[tuple]:
    """(title, commands, why) when every import compiles torch's modules from source again."""
    imp, comp = fx.num("torch.import_s"), fx.num("torch.bytecode.compile_s")
    if imp is None or comp is None or comp < COMPILE_S or comp < COMPILE_SHARE * imp:
        return None
    n = fx.int("torch.bytecode.compiled_modules")
    written = fx.get("torch.bytecode.cache_written_sample")
    site = _site(fx) or "<site-packages>"
    head = f"`import torch` took {imp:.1f} s, {comp:.1f} s of it compiling {n} modules from source"
    compile_cmd = f"python -m compileall -q -j 0 {site}  # once, as the environment's owner or at image build time"
    if fx.get("torch.bytecode.pythondontwritebytecode"):
        return (
            head + ": PYTHONDONTWRITEBYTECODE is set, so no process keeps the compiled bytecode",
            ["unset PYTHONDONTWRITEBYTECODE  # where it is set: shell profile, job script, Dockerfile ENV", compile_cmd],
            "With the caches written, imports load bytecode instead of compiling thousands of files at every start.",
        )
    if fx.get("torch.bytecode.torch_dir_writable") is False or (isinstance(written, list) and written[1] and not written[0]):
        return (
            head + ": there is no bytecode cache and it cannot be written here (site-packages is read-only for this user)",
            [compile_cmd, "uv pip install --compile-bytecode …  # or UV_COMPILE_BYTECODE=1, when uv installs the environment"],
            "A read-only environment must ship its bytecode caches; without them every import compiles torch again.",
        )
    return None  # written now: only this first import paid


def _network_cause(fx: Facts) -> Optional[tuple]:
    imp = fx.num("torch.import_s")
    if not fx.get("torch.bytecode.network_filesystem") or imp is None or imp < NETWORK_IMPORT_S:
        return None
    fs, mnt = fx.str("torch.bytecode.filesystem"), fx.str("torch.bytecode.mount_point")
    return (
        f"`import torch` took {imp:.1f} s: torch is installed on a network filesystem ({fs} at {mnt})",
        [
            "# copy the environment to local disk and run from there, e.g. conda-pack, or a venv on local NVMe (/tmp, $TMPDIR)",
            "# or ship the environment in a container image",
        ],
        "Every one of the thousands of files an import opens is a network round trip; local disk removes them.",
    )


@check(TORCH_IMPORT_SLOW)
def torch_import_slow(fx: Facts) -> Iterator[Finding]:
    causes: List[tuple] = [c for c in (_compile_cause(fx), _network_cause(fx)) if c]
    if not causes:
        return
    title, cmds, why = causes[0]
    evidence = {
        "torch.import_s": fx.num("torch.import_s"),
        "torch.bytecode": fx.get("torch.bytecode"),
    }
    if len(causes) > 1:
        title += "; also: " + causes[1][0].split(": ", 1)[-1]
        cmds = cmds + causes[1][1]
    yield TORCH_IMPORT_SLOW.finding(title=title, evidence=evidence, fix=Fix(tuple(cmds), why))


def register():
    return [torch_import_slow]
