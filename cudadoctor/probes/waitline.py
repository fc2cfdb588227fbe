"""The live line on a terminal while a live check waits on the torch probe.

Importing torch can take tens of seconds (cold caches, network file systems, many GPUs to
initialise); a tool that prints nothing until its time limit looks hung. So, on a terminal only
(stderr a TTY, colour not switched off with a non-empty NO_COLOR, TERM not "dumb"), once the wait has lasted
:data:`SHOW_AFTER_S`, one line on stderr says what is being waited for and for how long —
``importing torch… 14 s of 90 s`` — redrawn in place and erased when the wait ends. Files and
pipes never see it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from .proc import Child

#: A healthy import takes about a second: the line appears only for a wait longer than this.
SHOW_AFTER_S = 2.0
TICK_S = 0.25
ERASE = "\r\x1b[K"

#: The torch probe's stages (child/torch_probe.py) in the user's words.
DOING = {
    "start": "importing torch",
    "find": "importing torch",
    "import": "importing torch",
    "versions": "reading torch's build",
    "cudnn": "loading cuDNN",
    "cuda_init": "initialising CUDA",
    "devices": "querying the GPUs",
    "peer_access": "checking peer access between GPUs",
    "libraries": "listing the loaded libraries",
    "done": "finishing",
}


def doing(stage: str | None) -> str:
    if stage and stage.startswith("kernel:"):
        return f"running a test kernel on GPU {stage.split(':', 1)[1]}"
    if stage and stage.startswith("companion:"):
        return f"importing {stage.split(':', 1)[1]}"
    return DOING.get(stage or "start", "importing torch")


def wanted(stream: IO[str] | None = None) -> bool:
    """Whether ``stream`` (default: stderr) is a terminal that may show a live line."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":  # NO_COLOR: set and non-empty (no-color.org)
        return False
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _draw(child: Child, timeout: float, stop: threading.Event, stream: IO[str]) -> None:
    shown = ""
    try:
        while not stop.wait(TICK_S):
            took = child.elapsed()
            if took < SHOW_AFTER_S:
                continue
            line = f"{doing(child.stage())}… {took:.0f} s of {timeout:.0f} s"
            if line != shown:
                stream.write(ERASE + line)
                stream.flush()
                shown = line
        if shown:
            stream.write(ERASE)
            stream.flush()
    except (OSError, ValueError):  # the terminal went away: nothing to show it on
        pass


@contextmanager
def showing(child: Child, timeout: float, stream: IO[str] | None = None) -> Iterator[None]:
    """While the block runs (a wait on ``child``), keep the live line on ``stream`` if it is a terminal."""
    stream = sys.stderr if stream is None else stream
    if not wanted(stream):
        yield
        return
    stop = threading.Event()
    t = threading.Thread(target=_draw, args=(child, timeout, stop, stream), daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(1.0)
