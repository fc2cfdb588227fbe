"""The process entry point: the `cudadoctor` console script and `python -m cudadoctor`.

It wraps :func:`cudadoctor.cli.main` with two things only a whole process can do:

- For ``check`` it starts the default torch probe first, before click and the engine are imported
  (see ``probes/prestart.py``, which reads the command's name and nothing else): torch's import is
  the long pole, and the CLI loads beside it instead of before it.
- It ends the process with ``os._exit`` once the output is flushed. Everything cudadoctor writes
  is closed by then (files are written atomically and closed; temporary directories are removed
  by their ``with`` blocks), and the interpreter's own teardown — freeing every module object —
  costs about 190 ms on the project's 2-CPU machine (paired runs; 20-35 ms on a quiet one) that
  nobody waits for on purpose.
"""

from __future__ import annotations

import os
import sys


def main(argv: "list[str] | None" = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    from .probes import prestart, proc

    prestart.start_for(args, fork=True)
    code = 0
    try:
        from .cli import main as cli_main

        cli_main(args)
    except SystemExit as e:
        code = proc.exit_code(e.code)
    finally:
        prestart.discard()
        proc.kill_running()  # after Ctrl-C or an error: no probe outlives us
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: started with that descriptor closed (`cudadoctor check -o f >&-`)
                stream.flush()
        except (BrokenPipeError, ValueError, OSError):  # `cudadoctor check | head -1`
            pass
    os._exit(code)
