"""The NVIDIA kernel module: loaded, the right flavour, not displaced by nouveau, reachable from a container.

Codes: kernel-module-missing, secure-boot-module-blocked, nouveau-bound, open-kernel-module-required, container-gpu-access-lost,
cuda-compat-driver-mismatch.
"""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.errortext import of_facts as evidence_of
from cudadoctor.interpret import (
    container,
    gpus,
    is_wsl,
    kernel_module,
    ld_library_path,
    loaded_libraries,
    os_key,
    os_known,
)
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, text_of
from ._fixes import filtered_path_command
from .drv10 import compat_named

KERNEL_MODULE_MISSING = Code(
    code="kernel-module-missing",
    title="The NVIDIA driver's user space is installed, but no nvidia kernel module exists for the running kernel",
    area="driver",
    severity="error",
    explanation={
        "what": '`modprobe nvidia` finds no module ("Module nvidia not found in directory /lib/modules/<kernel>"), '
        'so nvidia-smi "couldn\'t communicate with the NVIDIA driver" although the driver packages are installed. '
        'That nvidia-smi failure (or NVML\'s "Driver Not Loaded") alone, on Linux outside a container and WSL, is '
        "read as this code too: nvidia-smi is part of the driver's user space, so the module is what is missing; "
        "`sudo modprobe nvidia` names the reason when it is another (Secure Boot, nouveau, an unsupported GPU).",
        "why": "The kernel was upgraded and DKMS did not build the nvidia module for it (headers missing, a DKMS "
        "build error, or a driver installed from the .run file without DKMS), or the module package for this "
        "kernel flavour was never installed.",
        "confirm": "`uname -r` against `dkms status` (the kernels a module was built for); `modinfo nvidia` fails; "
        "`ls /lib/modules/$(uname -r)/updates/dkms/`.",
        "fix": "Install the headers of the running kernel and rebuild the module (`sudo dkms autoinstall`), or "
        "install the distribution's prebuilt module package for this kernel, then `sudo modprobe nvidia`.",
    },
    links=("https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/",),
)

SECURE_BOOT_MODULE_BLOCKED = Code(
    code="secure-boot-module-blocked",
    title="Secure Boot refuses the unsigned NVIDIA kernel module",
    area="driver",
    severity="error",
    explanation={
        "what": "The nvidia module exists but the kernel will not load it: \"could not insert 'nvidia': Key was "
        'rejected by service", or the kernel is "locked down from EFI Secure Boot".',
        "why": "With Secure Boot on, the kernel loads only modules signed by an enrolled key. A DKMS-built or "
        ".run-installed nvidia module is signed with a local Machine Owner Key (MOK) that was never enrolled, or "
        "not signed at all.",
        "confirm": '`mokutil --sb-state` says SecureBoot enabled; `sudo modprobe nvidia` prints "Key was rejected by '
        'service"; `mokutil --test-key /var/lib/shim-signed/mok/MOK.der` says it is not enrolled.',
        "fix": 'Enrol the key DKMS signs with (`sudo mokutil --import` it, reboot, choose "Enroll MOK" and enter the '
        "password), or disable Secure Boot in the firmware setup.",
    },
    links=("https://wiki.ubuntu.com/UEFI/SecureBoot/DKMS",),
)

NOUVEAU_BOUND = Code(
    code="nouveau-bound",
    title="The open-source nouveau driver holds the GPU",
    area="driver",
    severity="error",
    explanation={
        "what": "The `nouveau` kernel module is bound to the NVIDIA GPU, so NVIDIA's driver cannot load or bind.",
        "why": "nouveau is the kernel's built-in driver for NVIDIA cards; it has no CUDA. It loads at boot unless "
        "blacklisted, and NVIDIA's installer refuses to proceed while it is in use.",
        "confirm": '`lsmod | grep nouveau`; `lspci -k -d 10de:` shows "Kernel driver in use: nouveau".',
        "fix": "Blacklist nouveau, rebuild the initramfs and reboot; then install or load NVIDIA's driver.",
    },
    links=("https://docs.nvidia.com/cuda/cuda-installation-guide-linux/#disabling-nouveau",),
)

OPEN_KERNEL_MODULE_REQUIRED = Code(
    code="open-kernel-module-required",
    title="This GPU needs NVIDIA's open kernel modules, but the proprietary flavour is installed",
    area="driver",
    severity="error",
    explanation={
        "what": 'The kernel log says the GPU "requires use of the NVIDIA open kernel modules": Blackwell GPUs '
        "(RTX 50 series, RTX PRO Blackwell, B100/B200, GB200) are supported only by the open flavour "
        "(`nvidia-open`, `-open` packages, `--kernel-module-type=open`).",
        "why": "NVIDIA's proprietary kernel module does not support Blackwell; with it installed the module loads "
        "but refuses the GPU, so nvidia-smi finds no devices and CUDA reports no GPU.",
        "confirm": "`sudo dmesg | grep -i 'open kernel modules'`; `cat /proc/driver/nvidia/version` says "
        '"Open Kernel Module" for the open flavour; `modinfo nvidia | grep license` is "Dual MIT/GPL" for it.',
        "fix": "Replace the driver's kernel part with the open flavour of the same driver branch (570 or newer for "
        "Blackwell), then reboot.",
    },
    links=(
        "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/",
        "https://github.com/NVIDIA/open-gpu-kernel-modules",
    ),
)

CONTAINER_GPU_ACCESS_LOST = Code(
    code="container-gpu-access-lost",
    title='A running container lost access to its GPUs (NVML "Unknown Error")',
    area="driver",
    severity="error",
    explanation={
        "what": 'Inside a container that could use the GPU before, nvidia-smi and CUDA now fail with "Failed to '
        'initialize NVML: Unknown Error" while the host still works.',
        "why": "With systemd managing cgroups, a `systemctl daemon-reload` on the host (often run by package "
        "upgrades) rewrites the container's device rules and drops the NVIDIA devices that the runtime had added. "
        "The container keeps running without GPU access.",
        "confirm": "`nvidia-smi` works on the host but not in the container; the container's start time is before "
        "the host's last `systemd[1]: Reloading` in the journal.",
        "fix": "Restart the container (it regains the GPUs). To stop it recurring: create the /dev/char symlinks "
        "(`sudo nvidia-ctk system create-dev-char-symlinks --create-all`), use CDI device injection, or run Docker "
        "with the cgroupfs driver, as NVIDIA's notice describes.",
    },
    links=(
        "https://github.com/NVIDIA/nvidia-docker/issues/1730",
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/251",
    ),
)

CUDA_COMPAT_DRIVER_MISMATCH = Code(
    code="cuda-compat-driver-mismatch",
    title="The image's CUDA forward-compatibility libraries do not fit the host's driver (error 803)",
    area="driver",
    severity="error",
    explanation={
        "what": "A libcuda from a cuda-compat package (`/usr/local/cuda/compat`, `/usr/local/cuda-X.Y/compat`, "
        "typically baked into a container image) is on the loader path, and CUDA fails with error 803 "
        '"system has unsupported display driver / cuda driver combination".',
        "why": "Forward-compatibility libcuda must come from a newer driver than the host's kernel module and is "
        "tied to particular driver branches; when the host driver is newer than the compat libraries, or of a "
        "branch they do not support, the pair is refused. The image, not the host, is what is wrong.",
        "confirm": "`echo $LD_LIBRARY_PATH | tr : '\\n' | grep compat`; `ls -l /usr/local/cuda/compat/`; on the "
        "host `nvidia-smi` shows the driver; `ldconfig -p | grep libcuda` inside the container.",
        "fix": "Take the compat directory off the loader path in the image (or remove the cuda-compat package) so "
        "the host driver's libcuda, mounted by the NVIDIA container runtime, is used; or use an image whose "
        "CUDA the host driver supports natively.",
    },
    links=(
        "https://docs.nvidia.com/deploy/cuda-compatibility/#forward-compatibility",
        "https://github.com/NVIDIA/nvidia-docker/issues/1256",
    ),
)


def _text(fx: Facts) -> str:
    return text_of(fx)  # the error texts as the engine normalised them


def _distro(fx: Facts) -> str:
    return (fx.str("system.distro") or fx.str("system.os") or "").lower()


#: Causes more specific than "the module is not loaded" that the text can show (each its own check), or that
#: show the module loaded after all: when one of them is in the text, the generic reading gives way.
_MORE_SPECIFIC = (
    "secure-boot-module-blocked",
    "nouveau-bound",
    "gpu-needs-legacy-driver",
    "open-kernel-module-required",
    "open-kernel-module-unsupported",
    "nvml-driver-mismatch",
    "gpu-init-failed",
    "wsl-driver-in-guest",
    "wsl-gpu-unsupported",
    "container-gpu-access-lost",
    "container-toolkit-missing",
)
#: What the text says when the module was missing for the running kernel (kernel update, DKMS, headers).
_KERNEL_SIDE = re.compile(
    r"/lib/modules/|\bdkms\b|linux-headers|kernel-devel|kernel[- ](?:upgrade|update)|new kernel|\.ko\b", re.I
)


#: WSL named in the text (its kernel release, "WSL2", "Windows Subsystem for Linux"): the GPU comes from the
#: Windows driver, there is no nvidia kernel module to load in the guest.
_WSL_TEXT = re.compile(r"microsoft-standard|\bWSL\s?2?\b|Windows Subsystem for Linux", re.I)


def module_is_machines_own(fx: Facts) -> bool:
    """Linux outside WSL and outside a container (or not known otherwise): the nvidia kernel module is
    this machine's to load. On Windows and under WSL nvidia-smi's failure has other causes, and in a
    container the module is the host's."""
    if os_key(fx) != "linux" or is_wsl(fx) is True:
        return False
    if any(_WSL_TEXT.search(x) for x in (fx.str("system.distro") or "", fx.str("system.kernel") or "", _text(fx))):
        return False  # collect_env's OS line ("Ubuntu 20.04 on WSL2 (...)") lands in system.distro
    c = container(fx)
    return not c or c == "none"


def module_not_loaded(fx: Facts) -> Optional[Tuple[str, str]]:
    """(where, what) shows the driver's user space installed with no nvidia kernel module answering on
    a machine whose module it is: NVML's "driver not loaded" (the library is there), a kernel-module-missing
    wording in the text; None when the module is loaded, a more specific cause is in the text, or the
    platform is not one where the module is the machine's own."""
    if kernel_module(fx) is True or not module_is_machines_own(fx):
        return None
    if kernel_module(fx, "nouveau") is True:
        return None  # nouveau-bound says why
    ev = evidence_of(fx)
    if any(ev.of(code) for code in _MORE_SPECIFIC):
        return None
    said = error_match(fx, KERNEL_MODULE_MISSING)
    if said:
        return said
    if fx.str("nvml.status") == "driver-not-loaded":
        return "nvml.status", f"driver-not-loaded ({fx.str('nvml.error') or 'NVML: Driver Not Loaded'})"
    return None


#: The NVIDIA driver or GPU named at all, in the reporters' spellings ("Nivida-dkms", "nvida").
_NVIDIA_WORD = re.compile(r"n(?:vidia|ivida|vida)|geforce|quadro|\b[GR]TX\s?\d{3,4}", re.I)
#: The machinery that builds or loads the kernel module, whatever tool's words: DKMS, akmods/kmod packages, the
#: kernel's headers, modprobe, the running kernel's version or its update.
_MODULE_SIDE = re.compile(
    r"\bdkms\b|\bakmods?\b|\bkmods?\b|kernel[ -]?modules?\b|kernel[ -](?:headers|devel)|linux-headers|\bheaders\b|"
    r"/lib/modules/|\binitramfs\b|\bmodprobe\b|\b(?:nvidia|kernel|dkms|driver)[\s_-]+modules?\b|"
    r"\bmodules?\s+(?:was|were|is|are|not|did|does|will|won't)\b|"
    r"(?:new|newer|updated?|upgraded?|hwe|latest)\s+kernel|kernel\s+(?:upgrade|update)|"
    r"\bkernel\s+(?:to\s+)?\d+\.\d+|\b\d+\.\d+(?:\.\d+)?\s+kernel\b",
    re.I,
)
#: ... and, in the same sentence, that it did not happen: not built, not loaded, the desktop's fallback driver.
_FAILED = re.compile(
    r"\bno\b|\bnot\b|n't\b|\bwont\b|missing|\bfail|\berror|fall(?:ing|s)?[ -]?back|low[- ]resolution|"
    r"broken|could not|cannot|unable|have to manually|\bgone\b|deleted|disappear",
    re.I,
)
#: Other causes the reporter's words name, each read by its own check: then this reasoning stays silent.
_OTHER_CAUSE = re.compile(r"secure\s?-?boot|\bmokutil\b|\bnouveau\b|version mismatch|\bWSL\b|microsoft-standard", re.I)


def _sentences(text: str) -> List[str]:
    """The text's lines, and their sentences (a stop after a word, then a capital: not "570.133.07... FAILED")."""
    return [x for x in re.split(r"(?<=[A-Za-z][.!?])\s+(?=[A-Z])|\n+", text) if x.strip()]


def _module_trouble(fx: Facts) -> Optional[Tuple[str, str]]:
    """(where, sentence) when, on Linux, the text names the NVIDIA driver and, in one sentence, the machinery that
    builds or loads its kernel module (DKMS, akmods/kmod, the kernel's headers, a kernel update) beside words of
    failure: a support engineer's reading of "nvidia-dkms is installed but no headers" or "the driver won't
    install on the 6.14 kernel", whoever's words they are. Nothing shows the module loaded or CUDA working."""
    if not module_is_machines_own(fx) or kernel_module(fx) is True or kernel_module(fx, "nouveau") is True:
        return None
    if os_known(fx) and os_key(fx) != "linux":
        return None
    if fx.bool("torch.cuda_available") is True or fx.int("nvml.device_count"):
        return None
    text = _text(fx)
    if not _NVIDIA_WORD.search(text) or _OTHER_CAUSE.search(text):
        return None
    ev = evidence_of(fx)
    if any(ev.of(code) for code in _MORE_SPECIFIC):
        return None
    for sentence in _sentences(text):
        if _MODULE_SIDE.search(sentence) and _FAILED.search(sentence):
            return "user_error", sentence.strip()[:300]
    return None


@check(KERNEL_MODULE_MISSING)
def kernel_module_missing(fx: Facts) -> Iterator[Finding]:
    """The driver's user space is there and the nvidia module is not loaded: none built for the running
    kernel (kernel upgraded without a DKMS rebuild), or (text alone) not loaded for a reason to confirm."""
    said = module_not_loaded(fx)
    if not said:
        weak = _module_trouble(fx)
        if weak:
            yield _likely_module_missing(fx, weak)
        return
    text = _text(fx)
    kver = re.search(r"/lib/modules/([\w.+-]+)", text)
    k = kver.group(1) if kver else "$(uname -r)"
    fedora = any(x in _distro(fx) for x in ("fedora", "red hat", "rocky", "alma", "centos"))
    headers = f"sudo dnf install kernel-devel-{k}" if fedora else f"sudo apt-get install linux-headers-{k}"
    # RPM Fusion's packages (Fedora's usual route) build the module with akmods, not DKMS
    akmods = "fedora" in _distro(fx) or bool(
        re.search(r"\bakmods?\b|akmod-nvidia|nvidia-fallback|Falling back to nouveau", text, re.I)
    )
    rebuild = "sudo akmods --force && sudo dracut --force" if akmods else "sudo dkms autoinstall"
    status = (
        "uname -r; rpm -qa 'kmod-nvidia*'  # the running kernel, and the kernels a module was built for"
        if akmods
        else "uname -r; dkms status  # the running kernel, and the kernels a module was built for"
    )
    evidence = {said[0]: said[1], "system.kernel_modules.nvidia": kernel_module(fx)}
    if _KERNEL_SIDE.search(text) or re.search(r"not found|FATAL|module missing|Missing NVIDIA kernel module", said[1], re.I):
        yield KERNEL_MODULE_MISSING.finding(
            title="No nvidia kernel module for the running kernel"
            + (f" ({kver.group(1)})" if kver else "")
            + (": rebuild it with akmods" if akmods else ": rebuild it with DKMS"),
            evidence=evidence,
            fix=Fix(
                (
                    status,
                    headers,
                    rebuild,
                    "sudo modprobe nvidia && nvidia-smi",
                ),
                "The module must be built for the exact kernel that runs; DKMS does that when the headers are installed.",
            ),
        )
        return
    yield KERNEL_MODULE_MISSING.finding(
        title="The NVIDIA driver's user space is installed but its kernel module is not loaded (most often: "
        "none was built for the running kernel after a kernel update)",
        evidence=evidence,
        fix=Fix(
            (
                "sudo modprobe nvidia  # its message names the cause:",
                "#   'Module nvidia not found' -> no module for this kernel: the three lines below",
                "#   'Key was rejected by service' -> Secure Boot: enrol the key (cudadoctor explain secure-boot-module-blocked)",
                "#   'No such device' -> this driver branch does not support the GPU (or nouveau holds it)",
                status,
                headers,
                f"{rebuild} && sudo modprobe nvidia && nvidia-smi",
            ),
            "nvidia-smi comes with the driver's user space; when it cannot reach the driver, the kernel module is "
            "missing for this kernel or was refused.",
        ),
    )


def _likely_module_missing(fx: Facts, said: Tuple[str, str]) -> Finding:
    """The warning the reporter's words give: the module was not built (or not loaded) for the running kernel."""
    akmods = any(x in _distro(fx) for x in ("fedora", "red hat", "rocky", "alma", "centos")) or bool(
        re.search(r"\bakmods?\b|\bkmod\b", said[1], re.I)
    )
    return KERNEL_MODULE_MISSING.finding(
        title="Likely: no nvidia kernel module was built or loaded for the running kernel (the report names "
        + ("akmods/kmod" if akmods else "DKMS, the kernel headers or a kernel update")
        + " beside the failure); confirm with modprobe",
        evidence={said[0]: said[1], "system.kernel_modules.nvidia": kernel_module(fx)},
        fix=Fix(
            (
                "uname -r; sudo modprobe nvidia  # 'Module nvidia not found' confirms it; its other answers name another cause",
                "rpm -qa 'kmod-nvidia*' 'kernel-modules*'  # the kernels a module was built for"
                if akmods
                else "dkms status  # the kernels a module was built for",
                "sudo dnf install kernel-devel-$(uname -r) kernel-modules-extra-$(uname -r)"
                if akmods
                else "sudo apt-get install linux-headers-$(uname -r)  # Arch: the -headers package of your kernel",
                "sudo akmods --force && sudo dracut --force" if akmods else "sudo dkms autoinstall",
                "sudo modprobe nvidia && nvidia-smi",
                "# a legacy driver branch (e.g. 470, 390) may not build for a new kernel at all: boot the older kernel",
            ),
            "The module must be built for the exact kernel that runs; DKMS or akmods do that when the kernel's headers "
            "(and, for new kernels, a driver branch that supports them) are installed.",
        ),
        severity="warning",
    )


#: Secure Boot named in the user's words (or its tools: mokutil, MOK, the kernel's lockdown).
_SECURE_BOOT = re.compile(r"secure\s?-?boot|\bmokutil\b|\bMOK\b|\blockdown\b", re.I)


def _secure_boot_named(fx: Facts) -> Optional[Tuple[str, str]]:
    """(where, line) when the text names Secure Boot (a report on an NVIDIA GPU: its kernel module), and nothing shows
    the module loaded or a more specific reason (nouveau, a driver/library mismatch, WSL or a container)."""
    if not module_is_machines_own(fx) or kernel_module(fx, "nouveau") is True:
        return None
    if fx.bool("torch.cuda_available") is True:
        return None
    ev = evidence_of(fx)
    if any(ev.of(code) for code in ("nouveau-bound", "nvml-driver-mismatch", "gpu-init-failed", "container-gpu-access-lost")):
        return None
    text = _text(fx)
    m = _SECURE_BOOT.search(text)
    if not m:
        return None  # in a report on an NVIDIA GPU, Secure Boot named at all is about the kernel module
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    return "user_error", text[start : end if end != -1 else None].strip()[:300]


#: The boot-time report that no nvidia module was loaded (RPM Fusion's nvidia-fallback service, see the
#: kernel-module-missing signature in kb/errors/memdrv.json): it has two causes, the module never built for this
#: kernel, or built and refused by Secure Boot.
_BOOT_FOUND_NO_MODULE = re.compile(
    r"NVIDIA kernel module (?:is\s+)?missing|Missing NVIDIA kernel module|Falling back to nouveau|defaulting to nouveau", re.I
)
#: ... and what shows it was the first: a build that failed or did not run, modprobe finding no module file.
_NOT_BUILT = re.compile(
    r"Module nvidia not found|/lib/modules/|\bdkms\b|linux-headers|kernel-devel|\bheaders\b|"
    r"kernel[- ](?:upgrade|update)|(?:new|newer|updated?|upgraded?)\s+kernel|akmods?\b[^\n]{0,40}(?:fail|error)",
    re.I,
)


def _refused_or_unbuilt(fx: Facts) -> Optional[Tuple[str, str]]:
    """(where, line) when the boot reported no nvidia module and the text shows no reason it was not built:
    Secure Boot refusing it is the other cause, to be confirmed (a warning beside kernel-module-missing)."""
    said = module_not_loaded(fx)
    if not said or not _BOOT_FOUND_NO_MODULE.search(said[1]):
        return None
    if _NOT_BUILT.search(_text(fx)):
        return None
    return said


@check(SECURE_BOOT_MODULE_BLOCKED)
def secure_boot_module_blocked(fx: Facts) -> Iterator[Finding]:
    """Secure Boot rejects the unsigned nvidia module; or (a warning) the text names Secure Boot beside an NVIDIA
    driver or module that does not load."""
    said = error_match(fx, SECURE_BOOT_MODULE_BLOCKED)
    severity = None
    possible = None
    if not said:
        said = _secure_boot_named(fx)
        severity = "warning"
    if not said:
        said = possible = _refused_or_unbuilt(fx)
    if not said or kernel_module(fx) is True:
        return
    fedora = any(x in _distro(fx) for x in ("fedora", "red hat", "rocky", "alma", "centos"))
    key = "/etc/pki/akmods/certs/public_key.der" if fedora else "/var/lib/shim-signed/mok/MOK.der"
    cmds = [
        "mokutil --sb-state  # SecureBoot enabled",
        f"sudo mokutil --import {key}  # set a one-time password",
        "sudo reboot  # choose 'Enroll MOK' in the blue screen and enter that password",
        "sudo modprobe nvidia && nvidia-smi",
        "# or disable Secure Boot in the firmware setup",
    ]
    if possible:
        yield SECURE_BOOT_MODULE_BLOCKED.finding(
            title="Possible: Secure Boot refusing the nvidia module: the boot found no module loaded and nothing here shows "
            "it failed to build; with Secure Boot on, an unsigned or not-enrolled module is refused. Confirm with mokutil",
            evidence={said[0]: said[1], "system.kernel_modules.nvidia": kernel_module(fx)},
            fix=Fix(tuple(cmds), "With Secure Boot the kernel loads only modules signed by an enrolled key."),
            severity="warning",
        )
        return
    yield SECURE_BOOT_MODULE_BLOCKED.finding(
        title="Secure Boot refuses the nvidia kernel module: enrol its signing key"
        if severity is None
        else "Secure Boot is named in the report: it refuses an unsigned (or not enrolled) nvidia module; confirm with "
        "mokutil and modprobe",
        evidence={said[0]: said[1], "system.kernel_modules.nvidia": kernel_module(fx)},
        fix=Fix(tuple(cmds), "With Secure Boot the kernel loads only modules signed by an enrolled key."),
        severity=severity,
    )


def _initramfs(fx: Facts) -> str:
    d = _distro(fx)
    return (
        "sudo dracut -f"
        if any(x in d for x in ("fedora", "red hat", "rocky", "alma", "centos", "suse"))
        else "sudo update-initramfs -u"
    )


#: The reporter saying nouveau holds on (loaded, present, in use, will not go), in one sentence with its name...
_NOUVEAU_HOLDS = re.compile(
    r"\bnouveau\b[^.!?\n]{0,40}?\b(?:is|was|are|being|still|always|gets?|keeps?)\b[^.!?\n]{0,20}?\b(?:loaded|present|in use|bound|"
    r"running|active|loading)\b|\bnouveau\b[^.!?\n]{0,30}?\b(?:cannot|can't|can not|won't|will not|could not|couldn't)\s+"
    r"(?:be\s+)?(?:disabled?|unload(?:ed)?|removed?|blacklisted|go away)",
    re.I,
)
#: ... unless the same sentence says it is not (or no longer) loaded.
_NOUVEAU_GONE = re.compile(
    r"\bnouveau\b[^.!?\n]{0,30}?\b(?:not|no longer|isn't|wasn't)\b[^.!?\n]{0,10}\b(?:loaded|in use|present|running)", re.I
)


def _nouveau_said_to_hold(fx: Facts) -> Optional[Tuple[str, str]]:
    """(where, sentence) when the reporter's words say nouveau stays loaded beside an NVIDIA driver that does not load
    (a warning: their reading, to confirm with lsmod), and nothing names another cause (Secure Boot)."""
    if not module_is_machines_own(fx) or kernel_module(fx) is True or fx.bool("torch.cuda_available") is True:
        return None
    text = _text(fx)
    if not _NVIDIA_WORD.search(text) or _SECURE_BOOT.search(text):
        return None
    for sentence in _sentences(text):
        if _NOUVEAU_HOLDS.search(sentence) and not _NOUVEAU_GONE.search(sentence):
            return "user_error", sentence.strip()[:300]
    return None


@check(NOUVEAU_BOUND)
def nouveau_bound(fx: Facts) -> Iterator[Finding]:
    """nouveau bound to the GPU (from the module list, or the installer's message); or (a warning) the reporter
    saying nouveau stays loaded while the NVIDIA driver does not load."""
    said = error_match(fx, NOUVEAU_BOUND)
    loaded = kernel_module(fx, "nouveau") is True and kernel_module(fx) is not True
    severity = None
    if not (said or loaded):
        said = _nouveau_said_to_hold(fx)
        if not said:
            return
        severity = "warning"
    evidence: Dict[str, object] = {
        "system.kernel_modules.nouveau": kernel_module(fx, "nouveau"),
        "system.kernel_modules.nvidia": kernel_module(fx),
    }
    if said:
        evidence[said[0]] = said[1]
    cmds = [
        "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf",
        _initramfs(fx),
        "sudo reboot",
        "lsmod | grep -E 'nouveau|nvidia'  # after the reboot: nvidia, not nouveau",
    ]
    if re.search(r"NovaCore|nova_core", said[1] if said else "", re.I):
        cmds[0] = (
            "printf 'blacklist nova_core\\nblacklist nova_drm\\nblacklist nouveau\\n' | sudo tee /etc/modprobe.d/blacklist-nova.conf"
        )
    if severity:
        cmds[0:0] = ["lsmod | grep -E 'nouveau|nvidia'; lspci -k -d 10de:  # 'Kernel driver in use: nouveau' confirms it"]
        cmds[1:1] = [
            "echo 'install nouveau /bin/true' | sudo tee -a /etc/modprobe.d/blacklist-nouveau.conf  # if a blacklist alone does not hold"
        ]
    yield NOUVEAU_BOUND.finding(
        title="The nouveau driver holds the NVIDIA GPU, so NVIDIA's driver cannot use it"
        if not severity
        else "Likely: nouveau still loads and holds the GPU, so NVIDIA's module cannot (the report says nouveau stays "
        "loaded); confirm with lsmod",
        evidence=evidence,
        fix=Fix(tuple(cmds), "Only one kernel driver can own the GPU; nouveau has no CUDA."),
        severity=severity,
    )


_BLACKWELL = re.compile(r"RTX 50\d0|RTX PRO \d+ Blackwell|\bB[12]00\b|GB[23]00|GB10\b|Blackwell", re.I)


#: What says the driver does not serve the GPUs: nvidia-smi's "No devices were found", the module not loaded,
#: or the text naming the kernel module's flavour (nvidia-open, -open packages, the installer's module type).
_FLAVOUR = re.compile(r"nvidia-open|nvidia-driver-\d+-open|open[- ]dkms|open kernel modules?|kernel-module-type", re.I)
#: ... unless the text says the open flavour is what runs: its NVRM banner, the open modules' issue template, or
#: the reporter having installed it (then another cause: the BIOS's Resizable BAR, a GSP failure, a new device id).
_OPEN_RUNS = re.compile(
    r"NVIDIA UNIX Open Kernel Module|Open GPU Kernel Modules Version|"
    r"\b(?:installed|using|with|from|package\s*:?)\s+(?:the\s+)?[`'\"]?nvidia-(?:driver-\d+-)?open\b",
    re.I,
)


#: Codes whose text shows the driver reaching the GPU (a kernel launched, memory allocated) or a driver-side cause
#: of its own: with one of them in the text, the open-module question does not arise.
_DRIVER_SERVES = (
    "gpu-init-failed",
    "gpu-arch-unsupported",
    "companion-arch-unsupported",
    "gpu-memory-occupied",
    "fabric-manager-missing",
    "nvml-driver-mismatch",
    "cuda-compat-driver-mismatch",
    "gpu-lost",
    "gpu-ecc-errors",
    "nvml-query-not-supported",  # NVML initialised and answered a query for the GPU (only that query unsupported)
)
#: torch's own warning about a GPU's capability ("Found GPU0 NVIDIA GB10 which is of cuda capability 12.1"): the CUDA
#: runtime enumerated the device, so the driver serves it.
_TORCH_FOUND_GPU = re.compile(r"\bFound GPU\s?\d+\b[^\n]{0,80}?\bwhich is of cuda capability\b", re.I)
#: The report says the driver serves the GPU (session 26, b272-03: "a working NVIDIA driver (580.126.18)", "nvidia-smi ...
#: all work correctly", a program's "NVML initialized successfully").
_DRIVER_WORKS = re.compile(
    r"\bNVML initiali[sz]ed successfully\b|\bworking NVIDIA (?:driver|stack)\b"
    r"|\bnvidia-smi\b[^\n.]{0,60}?\b(?:works?|working|shows?|lists?|detects?|sees?)\b(?!\s+(?:not|no)\b)",
    re.I,
)


def _blackwell_not_served(fx: Facts) -> Optional[Tuple[str, str]]:
    """(where, what) when a Blackwell GPU is named on a Linux machine whose driver does not serve it (no device
    NVML or torch reached) and the facts or text show the driver side failing or name its module flavour."""
    if not module_is_machines_own(fx) or fx.bool("torch.cuda_available") is True:
        return None
    names = [str(g["name"]) for g in gpus(fx) if g.get("name")]
    blackwell = [n for n in names if _BLACKWELL.search(n)]
    if not blackwell:
        return None
    text = _text(fx)
    if _OPEN_RUNS.search(text) or _TORCH_FOUND_GPU.search(text) or _DRIVER_WORKS.search(text):
        return None
    ev = evidence_of(fx)
    if any(ev.of(code) for code in _DRIVER_SERVES):
        return None  # the text shows the driver reached the GPU (or another driver-side cause)
    # NVML's own readings of a GPU (memory, utilisation, temperature: a live probe or a pasted nvidia-smi table),
    # or torch's devices, show the driver serving it; a name alone (collect_env's list, prose, lspci) does not.
    served = [
        d
        for d in fx.dicts("nvml.devices")
        if d.get("from") != "prose"
        and not d.get("error")
        and any(d.get(k) is not None for k in ("memory", "utilization", "temperature_c"))
    ]
    if (served and fx.str("nvml.status") in (None, "ok")) or fx.dicts("torch.devices"):
        return None
    if (
        fx.origin == "collect_env"
        and re.fullmatch(r"\d{3}\.\d{2,3}(?:\.\d{2})?", fx.str("nvml.driver_version") or "")
        and fx.int("nvml.device_count") != 0
    ):
        # collect_env reads the driver version from nvidia-smi's banner (always a full version, 580.159.03) and, without
        # torch's CUDA, the GPU list from nvidia-smi -L: both printed means the driver served the GPU (nvidia-smi prints
        # only "No devices were found" otherwise). A bare branch ("575") is a person's words, not nvidia-smi's.
        return None
    if fx.int("nvml.device_count") == 0:
        return "nvml.device_count", f"0 (nvidia-smi: No devices were found) with {blackwell[0]}"
    if module_not_loaded(fx) or fx.str("nvml.status") == "driver-not-loaded":
        return "system.kernel_modules.nvidia", f"not loaded, with {blackwell[0]}"
    m = _FLAVOUR.search(text)
    if m:
        return "user_error", f"{blackwell[0]}; the text names the module flavour: {m.group(0)}"
    # Nothing shows the GPU working: on Linux a Blackwell GPU needs the open flavour, the first thing to confirm
    # (only when every GPU named is a Blackwell one: a list of models in a text is not this machine's GPU), and
    # only where Linux is stated: a GPU's name alone ("my gpu is an rtx 5060") is as often Windows, where there is
    # no kernel-module flavour to choose and an old bundled torch is what fails (gpu-arch-unsupported).
    if len(blackwell) == len(names) and os_known(fx):
        return "gpus", f"{blackwell[0]} on Linux; nothing shows the driver serving it"
    return None


@check(OPEN_KERNEL_MODULE_REQUIRED)
def open_kernel_module_required(fx: Facts) -> Iterator[Finding]:
    """The kernel log says the GPU requires the open kernel modules; or (a warning) a Blackwell GPU on Linux
    that the driver does not serve while the text names the module or its flavour."""
    said = error_match(fx, OPEN_KERNEL_MODULE_REQUIRED)
    severity = None
    if not said:
        said = _blackwell_not_served(fx)
        if not said:
            return
        severity = "warning"
    names = [g["name"] for g in gpus(fx) if g.get("name")]
    reverse = "only ready for use on Data Center GPUs" in said[1]
    d = _distro(fx)
    if reverse:
        cmds = [
            "# the open module on a GPU it does not support by default: install the proprietary flavour,",
            "# or allow it: echo 'options nvidia NVreg_OpenRmEnableUnsupportedGpus=1' | sudo tee /etc/modprobe.d/nvidia-open.conf",
            _initramfs(fx),
            "sudo reboot",
        ]
        title = "The open NVIDIA kernel module refuses this GPU (use the proprietary flavour or enable unsupported GPUs)"
    else:
        branch = "570"
        if "ubuntu" in d or "debian" in d or not d:
            cmds = [
                f"sudo apt-get install nvidia-driver-{branch}-open  # replaces nvidia-driver-{branch} (proprietary); any branch >= 570"
            ]
        elif any(x in d for x in ("fedora", "red hat", "rocky", "alma", "centos")):
            cmds = ["sudo dnf module install nvidia-driver:open-dkms  # or akmod-nvidia-open (RPM Fusion)"]
        elif "arch" in d:
            cmds = ["sudo pacman -S nvidia-open  # replaces nvidia"]
        else:
            cmds = ["sudo sh NVIDIA-Linux-x86_64-<version>.run --kernel-module-type=open"]
        cmds += ["sudo reboot", "cat /proc/driver/nvidia/version  # 'Open Kernel Module'"]
        title = "This GPU needs NVIDIA's open kernel modules; the proprietary flavour is installed" + (
            f" ({names[0]})" if names else ""
        )
        if severity == "warning":
            title = (
                f"{[n for n in names if _BLACKWELL.search(n)][0]} is a Blackwell GPU, which runs only with NVIDIA's open kernel "
                "modules, and nothing here shows the driver serving it: check that the open flavour is installed"
            )
            cmds = ["cat /proc/driver/nvidia/version  # 'Open Kernel Module' for the open flavour", *cmds]
    yield OPEN_KERNEL_MODULE_REQUIRED.finding(
        title=title,
        evidence={
            said[0]: said[1],
            "gpus": names or None,
            "blackwell": any(_BLACKWELL.search(n) for n in names) if names else None,
        },
        fix=Fix(tuple(cmds), "Blackwell GPUs run only with the open flavour of NVIDIA's kernel module."),
        severity=severity,
    )


@check(CONTAINER_GPU_ACCESS_LOST)
def container_gpu_access_lost(fx: Facts) -> Iterator[Finding]:
    """NVML "Unknown Error" inside a container: the device cgroup rules were reset by the host."""
    said = error_match(fx, CONTAINER_GPU_ACCESS_LOST)
    if not said:
        return
    container = fx.str("system.container")
    text = _text(fx)
    hinted = bool(re.search(r"docker|container|kubernetes|\bpod\b|kubectl|podman|daemon-reload", text, re.I))
    if container in ("none",) and not hinted:
        return
    cmds = [
        "docker restart <container>  # or delete the pod: it regains the GPUs",
        "sudo nvidia-ctk system create-dev-char-symlinks --create-all  # on the host: stops it recurring (runc needs /dev/char links)",
        '# or: Docker with "exec-opts": ["native.cgroupdriver=cgroupfs"] in /etc/docker/daemon.json, or CDI device injection',
    ]
    yield CONTAINER_GPU_ACCESS_LOST.finding(
        title='This container lost its GPU access (NVML "Unknown Error"): restart it; the host reset its device rules',
        evidence={said[0]: said[1], "system.container": container},
        fix=Fix(tuple(cmds), "A systemd daemon-reload on the host drops the NVIDIA devices from running containers' cgroups."),
        severity="error" if (container and container != "none") or hinted else "warning",
    )


@check(CUDA_COMPAT_DRIVER_MISMATCH)
def cuda_compat_driver_mismatch(fx: Facts) -> Iterator[Finding]:
    """Error 803 while a cuda-compat libcuda is on the path (usually baked into the image)."""
    said = error_match(fx, CUDA_COMPAT_DRIVER_MISMATCH)
    ldp = ld_library_path(fx) or []
    compat_dirs = [p for p in ldp if "/compat" in p]
    compat_loaded = [
        d["path"] for d in (loaded_libraries(fx) or []) if d["name"].startswith("libcuda.so") and "/compat" in d["path"]
    ]
    text = _text(fx)
    e803 = re.search(
        r"unsupported display driver / cuda driver combination|Error 803|cudaErrorSystemDriverMismatch|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        text,
        re.I,
    )
    named = compat_named(text)  # "/usr/local/cuda/compat", "cuda-compat", "the `compat` library"
    if not (said or (e803 and (compat_dirs or compat_loaded or named))):
        return
    evidence = {
        "LD_LIBRARY_PATH_compat_entries": compat_dirs or None,
        "compat_libcuda_loaded": compat_loaded or None,
        "system.container": fx.str("system.container"),
        "nvml.driver_version": fx.str("nvml.driver_version"),
    }
    if said:
        evidence[said[0]] = said[1]
    elif e803:
        evidence["error"] = e803.group(0)
    if named and not (compat_dirs or compat_loaded):
        evidence["compat libraries named in the text"] = "yes"
    cmds: List[str] = []
    if compat_dirs:
        cmds.append(filtered_path_command("LD_LIBRARY_PATH", ldp, lambda p: "/compat" in p))
    else:
        cmds.append("export LD_LIBRARY_PATH=$(echo $LD_LIBRARY_PATH | tr : '\\n' | grep -v /compat | paste -sd:)")
    cmds += [
        "# in the image (Dockerfile): drop /usr/local/cuda/compat from LD_LIBRARY_PATH / ld.so.conf, or apt-get remove 'cuda-compat-*'",
        "# or pick an image whose CUDA the host driver supports natively (host: nvidia-smi shows 'CUDA Version')",
    ]
    yield CUDA_COMPAT_DRIVER_MISMATCH.finding(
        title="CUDA error 803 comes from the image's cuda-compat libcuda, which does not fit the host driver",
        evidence=evidence,
        fix=Fix(
            tuple(cmds),
            "In a container the host driver's own libcuda (mounted by the NVIDIA runtime) must be used unless forward compatibility is supported.",
        ),
    )


def register():
    return [
        kernel_module_missing,
        secure_boot_module_blocked,
        nouveau_bound,
        open_kernel_module_required,
        container_gpu_access_lost,
        cuda_compat_driver_mismatch,
    ]
