"""Where cudadoctor lives: the repository URL (the one place it is written in the code) and the
links and install advice built from it.

An installed cudadoctor has no ``docs/`` folder beside it, so help and errors point at the
documents in the repository. pyproject.toml's ``[project.urls]`` carries the same URL
(tests/test_install_routes.py checks that they agree).
"""

from __future__ import annotations

#: The public repository. Change it here and in pyproject.toml's [project.urls].
REPO_URL = "https://github.com/cudadoctor/cudadoctor"
#: The branch the documentation links read.
DOCS_REF = "main"


def doc_url(page: str) -> str:
    """The web address of a document in the repository: "smoke.md" -> ".../blob/main/docs/smoke.md"."""
    return f"{REPO_URL}/blob/{DOCS_REF}/docs/{page}"


#: Install and upgrade routes that work without a package index holding cudadoctor (docs/install.md).
INSTALL_URL = doc_url("install.md")
#: The pip requirement that installs the newest cudadoctor from the repository.
GIT_REQUIREMENT = f"git+{REPO_URL}"


def upgrade_advice(tool: "str | None" = None, python: "str | None" = None) -> str:
    """One line: how to upgrade this cudadoctor, by the route that installed it (no package index needed).

    ``tool`` is the isolated tool environment cudadoctor runs in (probes/interpreter.tool_environment:
    "pipx", "pipx run", "uv tool", "uvx" or None) and ``python`` its interpreter; both default to
    this process's. A plain install is upgraded into the interpreter that runs cudadoctor, by path.
    """
    import shlex
    import sys

    if tool is None and python is None:
        from .probes.interpreter import tool_environment

        tool = tool_environment()
    if tool in ("pipx", "pipx run"):
        cmd = (
            f"pipx install --force {GIT_REQUIREMENT}"
            if tool == "pipx"
            else f"pipx run --no-cache --spec {GIT_REQUIREMENT} cudadoctor"
        )
    elif tool == "uv tool":
        cmd = f"uv tool install --force {GIT_REQUIREMENT}"
    elif tool == "uvx":
        cmd = f"uvx --refresh --from {GIT_REQUIREMENT} cudadoctor"
    else:
        cmd = f"{shlex.quote(python or sys.executable)} -m pip install -U {GIT_REQUIREMENT}"
    return f"upgrade cudadoctor: {cmd} (other routes: {INSTALL_URL})"
