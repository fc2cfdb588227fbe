"""A driver release named as where the trouble started (session 23, from blind batches b174 and b180 and the threads of
the class: Citra after 470.86, llama.cpp slower above 576.33, GH200 devices gone after 565, Pop!_OS hanging past 550,
Caffe's backward pass on 331.38, GCE's GPUs not enumerated with 510, Mitsuba/Dr.Jit/pbrt OptiX failures after a driver
update):

- driver-regression: the text ties the failure to a driver release ("after updating to driver 470.86", "driver versions
  above 576.33", "anything past 550", "after 565+", "rolled back the driver and it works"), while nothing names another
  cause of a driver change (a library/module mismatch after an upgrade without a reboot, which nvml-driver-mismatch
  covers). A likely cause: NVIDIA drivers do regress for some programs and GPUs; the last driver that worked, or the
  release that fixed it, is the fix.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from cudadoctor import kb
from cudadoctor.errortext import extract
from cudadoctor.facts import Facts
from cudadoctor.interpret import driver_version
from cudadoctor.interpret.environment import os_family
from cudadoctor.interpret.versions import vtuple
from cudadoctor.model import Code, Finding, Fix, check

from ._common import text_of

DRIVER_REGRESSION = Code(
    code="driver-regression",
    title="The failure started with a driver release: most likely a regression in that driver",
    area="driver",
    severity="warning",
    explanation={
        "what": "A program that worked fails, hangs, crashes or slows down after an NVIDIA driver update, and the report "
        "names the release where it started (or says rolling the driver back fixed it).",
        "why": "NVIDIA drivers occasionally regress for particular programs, APIs (OptiX, NVML, CUPTI) or GPUs; the CUDA "
        "toolkit and the program are unchanged, only the driver moved.",
        "confirm": "Install the previous driver release (the last one that worked) and rerun: the failure goes away. "
        "NVIDIA's release notes for the new driver may list it under known issues or fixed issues of a later release.",
        "fix": "Roll back to the last driver that worked (Windows: a clean install of that release; Linux: the distribution's "
        "package of that branch, held), or move to a later driver that fixes it; report it to the program and NVIDIA.",
    },
    links=(
        "https://www.nvidia.com/en-us/drivers/",
        "https://github.com/ggml-org/llama.cpp/issues",
    ),
)

_V = r"v?([3-9]\d{2}(?:\.\d{1,3}){0,2})"
#: The release where it started, in the reporters' words.
_DRIVER = r"(?:nvid\w*\s+)?(?:gpu\s+|graphics\s+)?driver"
_STARTED_WITH = re.compile(
    r"\b(?:after|since|following)\s+(?:the\s+|an?\s+)?(?:(?:last|latest|recent|new)\s+)?(?:updat|upgrad|install)\w*\s+"
    rf"(?:(?:to|of)\s+)?(?:the\s+)?{_DRIVER}\s*(?:to\s+)?(?:the\s+)?(?:latest\s+)?(?:version\s*)?{_V}"
    rf"|\bdriver\s*(?:versions?\s*)?(?:above|after|past|newer\s+than|later\s+than|beyond)\s*{_V}"
    rf"|\b(?:anything|everything|any\s+driver)\s+(?:past|after|above|newer\s+than)\s+(?:nvid\w*\s+)?(?:driver\s+)?{_V}"
    rf"|\bafter\s+{_V}\+"
    rf"|\bdriver\s+{_V}\s+(?:incompatib\w+|regression|broke\b|breaks\b)"
    rf"|\bafter\s+(?:a\s+|the\s+|an\s+)?{_DRIVER}\s+(?:update|upgrade)\b"
    r"|\bafter\s+(?:updating|upgrading|an?\s+update\s+of)\s+(?:the\s+|my\s+)?(?:latest\s+)?(?:nvidia\s+)?(?:gpu\s+|graphics\s+)?drivers?\b",
    re.I,
)
#: A rollback said to fix it.
_ROLLED_BACK = re.compile(
    r"\b(?:roll(?:ed|ing)?\s*back|revert(?:ed|ing)?|downgrad\w+)\s+(?:the\s+|my\s+)?(?:nvidia\s+)?(?:gpu\s+)?driver", re.I
)
#: Other causes of trouble after a driver change: the kernel module and libraries at different versions (no reboot),
#: a CDI spec naming the old driver's files.
_MISMATCH = re.compile(
    r"Driver/library version mismatch|API mismatch|NVML library version"
    # a CDI spec still naming the previous driver's files (cdi-spec-stale, checks/cdi25.py)
    r"|(?:cannot stat|error stat'?ing file)\s*[`'\"]?/[^\n]*?\.so\.[\d.]*\d",
    re.I,
)


def _beyond_validated(fx: Facts, text: str) -> Optional[Finding]:
    """An application the kb lists (kb/app_validated_drivers.json) named with a driver of a newer branch than the one
    its release is validated on: its maintainers answer such crashes with the validated driver."""
    said = extract.versions(text).get("driver") or []  # "Driver Version: 595.79", "driver **595.79**"
    driver = driver_version(fx) or (said[0] if said else None)
    dv = vtuple(driver or "")
    if not dv:
        return None
    pasted = fx.dict("pasted.validated_app") or {}  # the reader's: named in the prose, with the release stated
    for app, row in kb.app_validated_drivers().items():
        if pasted.get("app") == app:
            stated = pasted.get("release")
        elif re.search(row["names"], text):
            m = re.search(row["version"], text)
            stated = m.group(1) if m else None
        else:
            continue
        release = stated or row["newest_listed"]
        validated = row["releases"].get(release)
        if validated is None or dv[0] <= validated["branch"]:
            continue
        windows = os_family(fx) == "windows" or bool(re.search(r"\.dll\b|[A-Za-z]:\\", text))
        want = validated["windows" if windows else "linux"]
        which = f"{app} {release}" if stated else f"{app} (up to {release})"
        return DRIVER_REGRESSION.finding(
            title=f"Likely: driver {driver} is newer than the {validated['branch']} branch {which} is validated on "
            f"(validated: {want}); its maintainers answer such failures with the validated driver",
            evidence={"driver": driver, "application": app, "release": stated, "validated": want},
            fix=Fix(
                (
                    f"# install the validated driver {want} ("
                    + (
                        "a clean install from NVIDIA's driver archive"
                        if windows
                        else "the .run installer from NVIDIA's Unix driver archive, or the distribution's 580 package, held"
                    )
                    + ")",
                    "nvidia-smi  # Driver Version shows the release in use",
                    f"# or a newer {app} release validated on your driver branch",
                ),
                f"A newer driver branch is not automatically compatible with {app} {release}; NVIDIA validates each "
                "release on one branch (kb/app_validated_drivers.json).",
            ),
            severity="warning",
        )
    return None


@check(DRIVER_REGRESSION)
def driver_regression(fx: Facts) -> Iterator[Finding]:
    text = text_of(fx)
    if _MISMATCH.search(text):
        return
    beyond = _beyond_validated(fx, text)
    if beyond is not None:
        yield beyond
        return
    started = _STARTED_WITH.search(text)
    back = None if started else _ROLLED_BACK.search(text)
    said = started or back
    if said is None:
        return
    version = next((g for g in started.groups() if g), None) if started else None
    evidence = {"said": said.group(0)}
    if version:
        evidence["driver"] = version
    yield DRIVER_REGRESSION.finding(
        title="Likely: a regression in "
        + (f"driver {version}" if version else "the new driver")
        + " (the failure started with it): roll back to the last driver that worked, or to a later release that fixes it",
        evidence=evidence,
        fix=Fix(
            (
                "# install the last driver release that worked (Windows: a clean install of it; Linux: that branch's package, then hold it)",
                "nvidia-smi  # after the reinstall: the Driver Version shows the release in use",
                "# or a later driver release whose notes list the problem as fixed; report it to the program and to NVIDIA",
            ),
            "Only the driver changed; drivers occasionally regress for particular programs, APIs or GPUs.",
        ),
    )


def register():
    return [driver_regression]
