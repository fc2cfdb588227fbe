"""Docker Desktop releases that broke GPU containers (session 25, from blind batch b243 and Docker's own tracker:
docker/for-win#11246 for 3.3.3, #13324 for 4.17.1):

- docker-desktop-gpu-regression: a report of GPU containers failing or hanging under Docker Desktop (WSL 2 backend)
  names a release kb/docker_desktop_gpu.json lists as having broken GPU containers. The driver, WSL and the image are
  fine; the fix is the last release that worked or a later one.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor import kb
from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import text_of

DOCKER_DESKTOP_GPU_REGRESSION = Code(
    code="docker-desktop-gpu-regression",
    title="This Docker Desktop release broke GPU containers (a known regression): use the last good release or a later one",
    area="system",
    severity="error",
    explanation={
        "what": "After a Docker Desktop update on Windows (WSL 2 backend), containers started with --gpus fail "
        "('nvidia-container-cli: initialization error: driver error: failed to process request') or hang in 'Created', "
        "while containers without GPUs and CUDA inside WSL itself work.",
        "why": "Some Docker Desktop releases shipped a broken GPU path for the WSL 2 backend (3.3.3, 4.17.1); Docker "
        "tracked each on docker/for-win and reporters went back to the release before.",
        "confirm": "`docker version` (Server: Docker Desktop X.Y.Z); `docker run --rm --gpus all ubuntu nvidia-smi` "
        "fails while `nvidia-smi` inside the WSL distribution works.",
        "fix": "Install the last Docker Desktop release that worked (Docker's release notes page has the installers) or "
        "a later release; the driver and the image need no change.",
    },
    links=(
        "https://github.com/docker/for-win/issues/11246",
        "https://github.com/docker/for-win/issues/13324",
        "https://docs.docker.com/desktop/release-notes/",
    ),
)

#: The report is about GPU containers: Docker's GPU option, NVIDIA's container CLI, or a GPU/CUDA/NVIDIA word.
_GPU_CONTEXT = re.compile(r"--gpus?\b|nvidia-container-cli|\bgpus?\b|\bcuda\b|\bnvidia\b", re.I)


@check(DOCKER_DESKTOP_GPU_REGRESSION)
def docker_desktop_gpu_regression(fx: Facts) -> Iterator[Finding]:
    named = fx.dict("pasted.docker_desktop") or {}
    stated = [str(r) for r in named.get("releases") or []]
    bad = kb.docker_desktop_gpu_regressions()
    hit = next((r for r in stated if r in bad), None)
    if hit is None or not (_GPU_CONTEXT.search(str(named.get("text") or "")) or _GPU_CONTEXT.search(text_of(fx))):
        return
    row = bad[hit]
    yield DOCKER_DESKTOP_GPU_REGRESSION.finding(
        title=f"Docker Desktop {hit} broke GPU containers under WSL 2 ({row['symptom']}): go back to "
        f"{row['last_good']} or move to a later release",
        evidence={"docker_desktop": hit, "said": named.get("text"), "tracking": row["tracking"]},
        fix=Fix(
            (
                "docker version  # Server: Docker Desktop " + hit,
                f"# install Docker Desktop {row['last_good']} (the last release that worked) or a later release: "
                "https://docs.docker.com/desktop/release-notes/",
                "docker run --rm --gpus all ubuntu nvidia-smi  # lists the GPU again",
            ),
            f"Docker tracked this release's GPU breakage on {row['tracking']}; the driver and the image need no change.",
        ),
    )


def register():
    return [docker_desktop_gpu_regression]
