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
#: One line of advice for an out-of-date cudadoctor, whatever route installed it.
UPGRADE_ADVICE = f"upgrade cudadoctor: pip install -U {GIT_REQUIREMENT} (pipx, uv, a wheel: {INSTALL_URL})"
