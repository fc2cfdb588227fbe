"""Visual Studio without the CUDA toolkit's MSBuild integration (session 24, from blind batch b197 and the threads of
the class: NVIDIA/cuda-samples#207, #281; dlunion/tensorRTIntegrate#15; DarioSamo/sm64rt-legacy-renderer#15;
CESNET/GPUJPEG#79; haosulab/SAPIEN#255):

- vs-cuda-integration-missing: a .vcxproj imports "BuildCustomizations\\CUDA X.Y.props" (MSB4019, "The imported project
  ... was not found"), or CMake's Visual Studio generator finds "No CUDA toolset found". The CUDA installer copies its
  MSBuild files (CUDA X.Y.props/.targets/.xml) into each Visual Studio it finds; a Visual Studio installed after CUDA, a
  network installer run without the visual_studio_integration component, or a project pinned to a CUDA release that is
  not installed leaves the import unresolved. The files ship in the toolkit's
  extras\\visual_studio_integration\\MSBuildExtensions folder.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, text_of

VS_CUDA_INTEGRATION_MISSING = Code(
    code="vs-cuda-integration-missing",
    title="Visual Studio lacks the CUDA toolkit's build integration (CUDA X.Y.props) the project needs",
    area="toolkit",
    severity="error",
    explanation={
        "what": "Opening or building a Visual Studio project fails with MSB4019 'The imported project "
        "\"...\\BuildCustomizations\\CUDA X.Y.props\" was not found', or CMake's Visual Studio generator stops at 'No CUDA "
        "toolset found'.",
        "why": "The CUDA installer copies its MSBuild files (CUDA X.Y.props, .targets, .xml) into every Visual Studio it "
        "finds at install time. A Visual Studio installed (or a new edition added) after CUDA, a network/silent install "
        "without the visual_studio_integration component, or a project pinned to a CUDA release that is not installed "
        "leaves Visual Studio without them.",
        "confirm": 'dir "C:\\Program Files\\Microsoft Visual Studio\\2022\\<edition>\\MSBuild\\Microsoft\\VC\\v170\\'
        'BuildCustomizations\\CUDA*"  # the CUDA X.Y files the project imports are not there',
        "fix": "Copy the files from the toolkit's extras\\visual_studio_integration\\MSBuildExtensions folder into that "
        "BuildCustomizations folder, or rerun the CUDA installer (Custom, with Visual Studio Integration) after Visual "
        "Studio. A project pinned to another CUDA release: retarget it (Build Dependencies > Build Customizations) to the "
        "installed one, or install that release.",
    },
    links=(
        "https://github.com/NVIDIA/cuda-samples/issues/207",
        "https://github.com/dlunion/tensorRTIntegrate/issues/15",
        "https://github.com/haosulab/SAPIEN/issues/255",
    ),
)

#: The release the project imports, and Visual Studio's BuildCustomizations folder, from MSBuild's message.
_PROPS = re.compile(r"(?P<dir>[A-Za-z]:\\[^\"'“”\n]*?BuildCustomizations)\\+CUDA (?P<v>\d{1,2}\.\d)\.(?:props|targets)", re.I)
#: The toolkit installed, from its path or nvcc.
_INSTALLED = re.compile(r"NVIDIA GPU Computing Toolkit\\+CUDA\\+v(\d{1,2}\.\d)|release (\d{1,2}\.\d), V\d", re.I)


def _installed(fx: Facts, text: str) -> Optional[str]:
    v = fx.str("toolkit.nvcc_version")
    if v:
        return ".".join(v.split(".")[:2])
    m = _INSTALLED.search(text)
    return (m.group(1) or m.group(2)) if m else None


@check(VS_CUDA_INTEGRATION_MISSING)
def vs_cuda_integration_missing(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, VS_CUDA_INTEGRATION_MISSING)
    if not said:
        return
    m = _PROPS.search(said[1])
    wanted = m.group("v") if m else None
    folder = (
        m.group("dir")
        if m
        else "C:\\Program Files\\Microsoft Visual Studio\\2022\\<edition>\\MSBuild\\Microsoft\\VC\\v170\\BuildCustomizations"
    )
    have = _installed(fx, text_of(fx))
    evidence = {said[0]: said[1]}
    source = have or wanted or "X.Y"
    copy = (
        f'copy "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v{source}\\extras\\visual_studio_integration\\'
        f'MSBuildExtensions\\*" "{folder}"  # as administrator; or rerun the CUDA installer with Visual Studio Integration'
    )
    cmds: Tuple[str, ...]
    if wanted and have and wanted != have:
        evidence["installed CUDA"] = have
        title = (
            f"The project imports CUDA {wanted}'s build files, but CUDA {have} is installed: retarget it or install CUDA {wanted}"
        )
        cmds = (
            f"# Visual Studio: right-click the project > Build Dependencies > Build Customizations > tick CUDA {have} "
            f"(or replace 'CUDA {wanted}.props'/'.targets' with {have} in the .vcxproj)",
            f"# or install CUDA {wanted} (with Visual Studio Integration) beside {have}",
        )
    else:
        title = (
            "Visual Studio has no CUDA build integration"
            + (f" for CUDA {wanted}" if wanted else "")
            + (": copy it from the toolkit or reinstall CUDA's Visual Studio Integration")
        )
        cmds = (
            copy,
            "# CI / network installer: include the visual_studio_integration_X.Y component; install Visual Studio first",
            "# CMake: configure again in a fresh build folder once the files are in place",
        )
    yield VS_CUDA_INTEGRATION_MISSING.finding(
        title=title,
        evidence=evidence,
        fix=Fix(cmds, "The CUDA installer copies its MSBuild files only into the Visual Studio installs present at the time."),
    )


def register():
    return [vs_cuda_integration_missing]
