"""nvidia-smi missing while the driver is installed and loaded (session 24, from blind batches b207 and b181 and the
threads of the class: Quansight/open-gpu-server#85, NVIDIA/data-science-stack#90, negativo17/nvidia-driver#53,
NVIDIA/nvidia-docker#736):

- nvidia-smi-not-installed: "nvidia-smi: command not found" (or "/usr/bin/nvidia-smi: No such file or directory")
  where the text shows the kernel module loaded (lsmod's nvidia rows, the NVRM version line) or names a driver
  packaging that leaves nvidia-smi out: on Linux nvidia-smi is its own package in most distributions' packaging
  (Ubuntu's nvidia-utils-<branch>, which ``ubuntu-drivers install --gpgpu`` does not install; negativo17's and
  NVIDIA's RHEL nvidia-driver-cuda; Debian's nvidia-smi). The driver works; a check that runs nvidia-smi (an install
  script's diagnostics, a CI step, a container's nvidia-smi mounted from the host) does not.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret.gpus import kernel_module
from cudadoctor.model import Code, Finding, Fix, check

from ._common import text_of

NVIDIA_SMI_NOT_INSTALLED = Code(
    code="nvidia-smi-not-installed",
    title="The NVIDIA driver is loaded but nvidia-smi is not installed (a separate package on Linux)",
    area="driver",
    severity="error",
    explanation={
        "what": "'nvidia-smi: command not found' (or '/usr/bin/nvidia-smi: No such file or directory', an install "
        "script's 'nvidia-smi not found, NVIDIA GPU Driver not installed correctly') while lsmod lists the nvidia "
        "module, or after installing the driver from packages that leave nvidia-smi out.",
        "why": "Most Linux packagings ship nvidia-smi apart from the kernel module and libraries: Ubuntu's "
        "nvidia-utils-<branch> (not installed by `ubuntu-drivers install --gpgpu`), negativo17's and NVIDIA's RHEL "
        "repository's nvidia-driver-cuda, Debian's nvidia-smi. CUDA programs work; whatever runs nvidia-smi fails, "
        "and a container toolkit has no nvidia-smi to mount from the host.",
        "confirm": "lsmod | grep nvidia; cat /proc/driver/nvidia/version  # the driver is loaded; "
        "command -v nvidia-smi  # nothing",
        "fix": "Install the package that carries nvidia-smi for the installed driver branch: Ubuntu `sudo apt install "
        "nvidia-utils-<branch>` (`-server` for the server drivers), Fedora/RHEL `sudo dnf install nvidia-driver-cuda`, "
        "Debian `sudo apt install nvidia-smi`.",
    },
    links=(
        "https://github.com/Quansight/open-gpu-server/pull/85",
        "https://github.com/negativo17/nvidia-driver/issues/53",
        "https://github.com/NVIDIA/data-science-stack/issues/90",
    ),
)

#: nvidia-smi itself missing, in a shell's, a script's or a reporter's words.
_SMI_MISSING = re.compile(
    r"nvidia-smi:\s*(?:command not found|not found)|/nvidia-smi:\s*No such file or directory|"
    r"nvidia-smi not found|can(?:no|')t find [`'\"]?nvidia-smi",
    re.I,
)
#: The driver shown loaded: lsmod's nvidia row ("nvidia   34086912  1 nvidia_modeset"), the module's version line.
_LOADED = re.compile(r"^\s*nvidia\s+\d{5,}\s+\d+|NVRM version:|/proc/driver/nvidia/version", re.I | re.M)
#: A packaging that leaves nvidia-smi out, named.
_PACKAGING = re.compile(
    r"ubuntu-drivers\s+(?:install|autoinstall)\s+--gpgpu|\bnegativo17\b|nvidia-driver-cuda\b|nvidia-utils", re.I
)


def _distro_fix(fx: Facts, text: str) -> str:
    distro = (fx.str("system.distro") or "") + " " + text[:4000]
    if re.search(r"ubuntu|pop!_os|mint|--gpgpu|nvidia-utils", distro, re.I):
        return "sudo apt install nvidia-utils-<branch>  # the driver's branch, e.g. nvidia-utils-580 (or -580-server for the server drivers)"
    if re.search(r"fedora|rhel|red hat|rocky|alma|centos|negativo17", distro, re.I):
        return "sudo dnf install nvidia-driver-cuda  # negativo17's and NVIDIA's RHEL repositories put nvidia-smi in it"
    if re.search(r"debian", distro, re.I):
        return "sudo apt install nvidia-smi  # Debian packages nvidia-smi on its own (the same release as nvidia-driver)"
    return "# install your distribution's package with nvidia-smi for the installed driver branch (Ubuntu nvidia-utils-<branch>, Fedora/RHEL nvidia-driver-cuda, Debian nvidia-smi)"


def _loaded(fx: Facts, text: str) -> Optional[str]:
    if kernel_module(fx) is True:
        return "the nvidia kernel module is loaded (facts)"
    listed = [str(x) for x in (fx.list("pasted.uvm.lsmod_nvidia") or [])]
    if "nvidia" in listed:
        return "lsmod lists " + ", ".join(listed)  # the paste's lsmod rows (readers/uvm.py)
    m = _LOADED.search(text)
    return m.group(0).strip() if m else None


def _said(fx: Facts) -> Optional[Tuple[str, Optional[str], Optional[str]]]:
    """(nvidia-smi missing, the driver shown loaded, the packaging named) when nvidia-smi is missing beside an installed
    driver; None otherwise (nvidia-smi missing alone is most often no driver at all: no-nvidia-driver)."""
    text = text_of(fx)
    missing = _SMI_MISSING.search(text)
    if not missing:
        return None
    loaded = _loaded(fx, text)
    packaging = _PACKAGING.search(text)
    if not (loaded or packaging):
        return None
    return missing.group(0), loaded, packaging.group(0) if packaging else None


def smi_missing_beside_driver(fx: Facts) -> bool:
    """nvidia-smi missing while the text shows the driver loaded (or a packaging that leaves it out): for the
    no-driver check (checks/driver.py), which then leaves the report to this one."""
    return _said(fx) is not None


@check(NVIDIA_SMI_NOT_INSTALLED)
def nvidia_smi_not_installed(fx: Facts) -> Iterator[Finding]:
    said = _said(fx)
    if said is None:
        return
    missing, loaded, packaging = said
    evidence = {"error": missing}
    if loaded:
        evidence["driver"] = loaded
    if packaging:
        evidence["packaging"] = packaging
    yield NVIDIA_SMI_NOT_INSTALLED.finding(
        title="nvidia-smi is not installed although the driver is"
        + (" loaded" if loaded else "")
        + ": install the package that carries it",
        evidence=evidence,
        fix=Fix(
            (
                "lsmod | grep nvidia; cat /proc/driver/nvidia/version  # the driver is loaded",
                _distro_fix(fx, text_of(fx)),
                "nvidia-smi  # lists the GPUs once installed",
            ),
            "Linux packagings ship nvidia-smi apart from the kernel module and libraries; the driver works without it.",
        ),
    )


def register():
    return [nvidia_smi_not_installed]
