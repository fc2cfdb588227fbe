"""The Container Device Interface (CDI) spec and the container engine disagreeing (session 25, from blind batch b246 and
the threads of each class on NVIDIA/nvidia-container-toolkit and the engines' trackers):

- cdi-spec-stale: the CDI spec (/etc/cdi/nvidia.yaml, written by `nvidia-ctk cdi generate`) lists the driver's files
  by their versioned names; after a driver update those files are gone, and crun/runc fail to bind-mount them
  ("cannot stat `/lib64/libEGL_nvidia.so.550.54.14`: No such file or directory"). The spec must be generated again
  after every driver change (nvidia-container-toolkit#450's maintainer; #692, podman#26233, webkit-container-sdk#23).
- cdi-spec-version-unsupported: the spec uses a field the engine's CDI library does not know ('json: unknown field
  "additionalGids"' from nvidia-ctk 1.19 read by podman 4.9; 'unknown field "hostPath"' from 1.12.0-rc.2 read by
  podman 4.2): a newer toolkit wrote a newer spec than the engine reads (nvidia-container-toolkit#1860, #1940, #38).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

CDI_SPEC_STALE = Code(
    code="cdi-spec-stale",
    title="The CDI spec names the previous driver's files: generate it again after the driver update",
    area="system",
    severity="error",
    explanation={
        "what": "After an NVIDIA driver update, GPU containers started through CDI (podman --device nvidia.com/gpu=all, "
        "Docker or containerd with CDI) fail: 'crun: cannot stat `/lib64/libEGL_nvidia.so.550.54.14`: No such file or "
        "directory', or lose the GPU.",
        "why": "`nvidia-ctk cdi generate` writes every driver file into the spec by its versioned name; a driver update "
        "replaces those files, and the old spec then points at files that no longer exist.",
        "confirm": "`grep -m3 '\\.so\\.' /etc/cdi/nvidia.yaml` shows the old driver version; `nvidia-smi` shows the new one.",
        "fix": "`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml` after every driver change (or automate it).",
    },
    links=(
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/450",
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html",
    ),
)
CDI_SPEC_VERSION_UNSUPPORTED = Code(
    code="cdi-spec-version-unsupported",
    title="The CDI spec uses fields this container engine's CDI library cannot read (a newer spec than it supports)",
    area="system",
    severity="error",
    explanation={
        "what": "The engine fails to load /etc/cdi/nvidia.yaml ('failed to unmarshal CDI Spec: ... json: unknown field "
        '"additionalGids"\') and then cannot resolve nvidia.com/gpu devices.',
        "why": "Each nvidia-container-toolkit release writes the newest CDI spec version it knows; an older podman, "
        "containerd or CRI-O built with an older CDI library rejects fields it does not know.",
        "confirm": "`head -3 /etc/cdi/nvidia.yaml` (cdiVersion); `podman --version` / the engine's CDI library version.",
        "fix": "Upgrade the container engine, or regenerate the spec with a toolkit release whose spec the engine reads "
        "(the reporters went back to nvidia-container-toolkit 1.18.x for podman 4.9).",
    },
    links=(
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/1860",
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/38",
    ),
)

_FILE = re.compile(r"(/[\w/.+-]*?\.so\.[\d.]*\d)")
_FIELD = re.compile(r'unknown field \\?"(\w+)\\?"')


@check(CDI_SPEC_STALE)
def cdi_spec_stale(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, CDI_SPEC_STALE)
    if not said:
        return
    m = _FILE.search(said[1])
    yield CDI_SPEC_STALE.finding(
        title="The CDI spec still lists "
        + (m.group(1).rsplit("/", 1)[-1] if m else "the previous driver's files")
        + ", which the driver update removed: generate the spec again",
        evidence={said[0]: said[1], "file": m.group(1) if m else None},
        fix=Fix(
            (
                "nvidia-smi  # the driver version now installed",
                "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml  # after every driver change",
                "nvidia-ctk cdi list  # nvidia.com/gpu=... devices again",
            ),
            "nvidia-ctk writes the driver's files into the spec by their versioned names; a driver update replaces them.",
        ),
    )


@check(CDI_SPEC_VERSION_UNSUPPORTED)
def cdi_spec_version_unsupported(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, CDI_SPEC_VERSION_UNSUPPORTED)
    if not said:
        return
    m = _FIELD.search(said[1])
    yield CDI_SPEC_VERSION_UNSUPPORTED.finding(
        title="The container engine cannot read the CDI spec"
        + (f" (unknown field '{m.group(1)}')" if m else "")
        + ": nvidia-ctk wrote a newer spec than its CDI library supports",
        evidence={said[0]: said[1], "field": m.group(1) if m else None},
        fix=Fix(
            (
                "head -3 /etc/cdi/nvidia.yaml; nvidia-ctk --version; podman --version  # the spec's cdiVersion and the two tools",
                "# upgrade the container engine (podman, containerd, CRI-O) to a release with a newer CDI library,",
                "# or install the toolkit release whose spec it reads (1.18.x for podman 4.9) and run: "
                "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
            ),
            "Each toolkit release writes the newest CDI spec version it knows; older engines reject unknown fields.",
        ),
    )


def register():
    return [cdi_spec_stale, cdi_spec_version_unsupported]
