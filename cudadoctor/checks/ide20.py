"""An IDE or notebook kernel running another Python than the terminal (session 20, from blind batch b93's partition):

- ide-uses-another-environment: the reporter says it works from a terminal but not in Jupyter, PyCharm, VS Code or Spyder
  (or the reverse; readers/issue.py pasted.terminal_vs_ide, kb/errors/b20.json symptoms.terminal_vs_ide). A Jupyter kernel
  runs the Python its kernel spec names, not the shell's; PyCharm and VS Code run the project's configured interpreter;
  and a kernel started from a launcher does not inherit the shell's activated environment or LD_LIBRARY_PATH
  (pytorch#6989, tensorflow#60790). Whatever fails there, the first thing to settle is which Python runs.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

IDE_USES_ANOTHER_ENVIRONMENT = Code(
    code="ide-uses-another-environment",
    title="Jupyter, the IDE or the launcher runs another Python environment than the terminal where it works",
    area="tool",
    severity="warning",
    explanation={
        "what": "torch (or TensorFlow) imports and sees the GPU from a terminal, but not in a Jupyter notebook, PyCharm, "
        "VS Code or Spyder (or the other way round).",
        "why": "A Jupyter kernel runs the Python its kernel spec names, which need not be the environment activated in "
        "the shell; PyCharm and VS Code run the interpreter configured for the project; and a kernel or IDE started "
        "from a desktop launcher does not inherit the shell's activated conda environment or LD_LIBRARY_PATH. So the "
        "other side imports another torch (a CPU build, an older one), no torch at all, or cannot find the CUDA "
        "libraries the terminal's environment variables point to.",
        "confirm": "`import sys; print(sys.executable)` (and `import torch; print(torch.__file__)`) in the notebook or IDE "
        "and in the terminal: different paths confirm it; `jupyter kernelspec list` shows the kernels and their Pythons.",
        "fix": "Point the notebook or IDE at the environment that works: register it as a kernel with that environment's "
        "Python (`python -m ipykernel install --user --name <env>`) and choose that kernel; in PyCharm set the project "
        "interpreter, in VS Code run 'Python: Select Interpreter'. For variables the shell sets (LD_LIBRARY_PATH), add "
        "them to the kernel spec's env or the environment's activation scripts.",
    },
    links=(
        "https://ipython.readthedocs.io/en/stable/install/kernel_install.html",
        "https://jupyter-client.readthedocs.io/en/latest/kernels.html#kernel-specs",
        "https://code.visualstudio.com/docs/python/environments",
        "https://www.jetbrains.com/help/pycharm/configuring-python-interpreter.html",
    ),
)


@check(IDE_USES_ANOTHER_ENVIRONMENT)
def ide_uses_another_environment(fx: Facts) -> Iterator[Finding]:
    said = fx.dict("pasted.terminal_vs_ide") or {}
    if not said.get("text"):
        return
    yield IDE_USES_ANOTHER_ENVIRONMENT.finding(
        title="It works in one place and not the other: the notebook or IDE most likely runs another Python environment "
        "than the terminal",
        evidence={f"pasted text, line {said.get('line')}": said["text"]},
        fix=Fix(
            (
                'python -c "import sys, torch; print(sys.executable, torch.__file__, torch.__version__)"  # in the terminal',
                "import sys, torch; print(sys.executable, torch.__file__, torch.__version__)  # in a notebook cell / the IDE: "
                "another path confirms it",
                "python -m pip install ipykernel && python -m ipykernel install --user --name <env>  # with the terminal "
                "env's Python; then choose kernel '<env>' in Jupyter",
                "# PyCharm: Settings > Project > Python Interpreter; VS Code: 'Python: Select Interpreter' - pick the same "
                "python as sys.executable in the terminal",
                '# variables the shell sets (LD_LIBRARY_PATH, CUDA_HOME): add them to the kernel spec\'s "env" '
                "(jupyter kernelspec list shows its folder) or to the conda env's activate.d script",
            ),
            "Jupyter kernels and IDEs run the interpreter they are configured with and do not inherit the shell's "
            "activated environment.",
        ),
    )


def register():
    return [ide_uses_another_environment]
