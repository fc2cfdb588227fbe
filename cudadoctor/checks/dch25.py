"""Windows' DCH drivers install no NVSMI folder (session 25, from blind batch b233 and the threads of the class:
BeamMW/cuda-miner#11, Minerx117/NemosMiner#10, plambe/zabbix-nvidia-smi-multi-gpu#19):

- nvsmi-folder-missing: a program looks for nvidia-smi.exe or nvml.dll in "C:\\Program Files\\NVIDIA Corporation\\NVSMI",
  where NVIDIA's older Standard drivers put them. DCH drivers (the only kind since Windows 10 1809 machines ship with
  them) install both into C:\\Windows\\System32, on PATH, and create no NVSMI folder: a hard-coded path fails (cmd's "is
  not recognized", a miner's "cuda error" when NVML does not load), while the GPU, the driver and CUDA work.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

NVSMI_FOLDER_MISSING = Code(
    code="nvsmi-folder-missing",
    title="The program looks for nvidia-smi.exe / nvml.dll in the NVSMI folder, which DCH drivers no longer create",
    area="driver",
    severity="error",
    explanation={
        "what": "A script, monitor or miner fails on Windows because 'C:\\Program Files\\NVIDIA Corporation\\NVSMI\\"
        "nvidia-smi.exe' (or nvml.dll there) does not exist, while nvidia-smi typed in a terminal works.",
        "why": "NVIDIA's DCH drivers put nvidia-smi.exe and nvml.dll in C:\\Windows\\System32 (on PATH) and create no "
        "NVSMI folder; only the older Standard drivers used it. Programs that hard-code the old path break.",
        "confirm": '`where nvidia-smi` (C:\\Windows\\System32\\nvidia-smi.exe); `dir "C:\\Program Files\\NVIDIA '
        'Corporation\\NVSMI"` (not found).',
        "fix": "Call nvidia-smi by name (PATH finds System32's), or point the program at C:\\Windows\\System32; for a "
        "program that loads nvml.dll only from NVSMI, update it or copy C:\\Windows\\System32\\nvml.dll into a new "
        "C:\\Program Files\\NVIDIA Corporation\\NVSMI folder (the reporters' workaround).",
    },
    links=(
        "https://github.com/BeamMW/cuda-miner/issues/11",
        "https://github.com/Minerx117/NemosMiner/issues/10",
        "https://github.com/plambe/zabbix-nvidia-smi-multi-gpu/issues/19",
    ),
)


@check(NVSMI_FOLDER_MISSING)
def nvsmi_folder_missing(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, NVSMI_FOLDER_MISSING)
    if not said:
        return
    nvml = "nvml" in said[1].lower()
    yield NVSMI_FOLDER_MISSING.finding(
        title="The program looks for "
        + ("NVML (nvml.dll)" if nvml else "nvidia-smi.exe")
        + " in C:\\Program Files\\NVIDIA Corporation\\NVSMI, which DCH drivers no longer create: it is in "
        "C:\\Windows\\System32",
        evidence={said[0]: said[1]},
        fix=Fix(
            (
                "where nvidia-smi  # C:\\Windows\\System32\\nvidia-smi.exe: call it by name, or use that path",
                'mkdir "C:\\Program Files\\NVIDIA Corporation\\NVSMI" && copy C:\\Windows\\System32\\nvml.dll '
                '"C:\\Program Files\\NVIDIA Corporation\\NVSMI\\"  # only for a program that loads nvml.dll from there; '
                "better, update it",
            ),
            "DCH drivers install nvidia-smi.exe and nvml.dll into System32 and no NVSMI folder.",
        ),
    )


def register():
    return [nvsmi_folder_missing]
