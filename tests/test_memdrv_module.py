"""kernel-module-missing against no-nvidia-driver: nvidia-smi failing to reach the driver means its user space is there.

nvidia-smi ships with the driver's user space; "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA
driver" (older drivers: "... with NVIDIA driver. Make sure that latest ...") therefore says the kernel module is not
loaded: on Linux outside a container and WSL that is kernel-module-missing, unless the text shows a more specific
reason (Secure Boot, nouveau, an unsupported GPU). On Windows and under WSL the same words stay no-nvidia-driver.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from cudadoctor import registry
from cudadoctor.cli import cli
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)

# https://github.com/GoogleCloudPlatform/compute-gpu-installation/pull/18 (after an automatic kernel upgrade)
SMI_NOW = (
    "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
    "NVIDIA driver is installed and running."
)
# The wording of drivers before ~2017 (no "the"), e.g. a Xen dom0 report quoted in a public repository.
SMI_OLD = (
    "FATAL: Error inserting nvidia_319 (/lib/modules/3.8.0-34-generic/updates/dkms/nvidia_319.ko): No such device\n"
    "NVIDIA: failed to load the NVIDIA kernel module.\n"
    "NVIDIA-SMI has failed because it couldn't communicate with NVIDIA driver. Make sure that latest NVIDIA driver is "
    "installed and running."
)


def _codes(text: str, **system):
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": text}
    if system:
        facts["system"] = dict(system)
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning")}


def test_nvidia_smi_failing_on_linux_is_the_kernel_module_not_no_driver():
    got = _codes(SMI_NOW, os="Ubuntu 22.04.2 LTS (x86_64)")
    assert "kernel-module-missing" in got and "no-nvidia-driver" not in got, list(got)
    f = got["kernel-module-missing"]
    assert f.severity == "error" and f.fix.commands[0].startswith("sudo modprobe nvidia"), f.fix.commands


def test_the_old_wording_is_read_too():
    got = _codes(SMI_OLD.split("\n", 1)[1].split("\n", 1)[1], os="Linux")  # the nvidia-smi line alone
    assert "kernel-module-missing" in got, list(got)


def test_a_kernel_side_text_gets_the_dkms_rebuild():
    """https://github.com/NVIDIA/nvidia-docker/issues/365: "modprobe: FATAL: Module nvidia not found." before the
    nvidia-smi failure (a .run driver built for 3.13.0-88, the machine now boots 3.13.0-116)."""
    text = "$ nvidia-smi\nmodprobe: FATAL: Module nvidia not found.\n" + SMI_NOW.split("\n", 1)[1]
    f = _codes(text, os="Linux")["kernel-module-missing"]
    assert f.title.startswith("No nvidia kernel module for the running kernel") and "sudo dkms autoinstall" in f.fix.commands


def test_a_more_specific_reason_in_the_text_wins():
    """Secure Boot refusing the module (https://github.com/gridhead/nvidia-auto-installer-for-fedora-linux/issues/75's
    class; the modprobe line as mokutil users paste it)."""
    text = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n" + SMI_NOW.split("\n", 1)[1]
    got = _codes(text, os="Fedora Linux 34")
    assert "secure-boot-module-blocked" in got and "kernel-module-missing" not in got, list(got)


def test_on_windows_and_wsl_the_same_words_stay_no_driver():
    for system in (
        {"os": "Microsoft Windows 10 Pro"},
        {"os": "Ubuntu 22.04 LTS", "kernel": "5.15.153.1-microsoft-standard-WSL2"},
    ):
        got = _codes(SMI_NOW.split("\n", 1)[1], **system)
        assert "kernel-module-missing" not in got and "no-nvidia-driver" in got, (system, list(got))


def test_live_nvml_driver_not_loaded_is_the_kernel_module():
    """NVML's NVML_ERROR_DRIVER_NOT_LOADED (9): libnvidia-ml is installed, the module is not loaded."""
    facts = new_facts("live")
    facts["system"] = {"os": "Linux", "distro": "Ubuntu 24.04.1 LTS", "kernel_modules": {"nvidia": False, "nouveau": False}}
    facts["nvml"] = {"status": "driver-not-loaded", "error": "Driver Not Loaded", "error_code": 9}
    rep = diagnose(facts, REG)
    codes = [f.code for f in rep.findings if f.severity == "error"]
    assert "kernel-module-missing" in codes and "no-nvidia-driver" not in codes, codes
    facts["system"]["kernel_modules"] = {"nvidia": False, "nouveau": True}  # nouveau holds the GPU: its own check says so
    codes = [f.code for f in diagnose(facts, REG).findings if f.severity == "error"]
    assert "kernel-module-missing" not in codes and "nouveau-bound" in codes, codes


# The lines of https://github.com/NVIDIA/open-gpu-kernel-modules/issues/935 (a GeForce RTX 5090 laptop GPU, lspci's
# name and nvidia-smi finding no device) without that tracker's template: as a user of the proprietary module pastes them.
BLACKWELL_NO_DEVICES = (
    "### Hardware: GPU\n\nNVIDIA Corporation GB203M / GN22 [GeForce RTX 5090 Max-Q / Mobile] [10de:2c18] (rev a1)\n\n"
    "### Describe the bug\n\n```\nnvidia-smi \nNo devices were found\n```\n"
)


def _paste(text: str):
    r = CliRunner().invoke(cli, ["check", "--from-text", "-", "--format", "json"], input=text)
    assert r.exit_code in (0, 1), r.output
    return {f["code"]: f for f in json.loads(r.stdout)["findings"]}


def test_a_blackwell_gpu_the_driver_does_not_serve_asks_for_the_open_module():
    got = _paste(BLACKWELL_NO_DEVICES)["open-kernel-module-required"]
    assert got["severity"] == "warning" and got["title"].startswith("GeForce RTX 5090 Max-Q Mobile is a Blackwell GPU"), got
    assert got["fix"]["commands"][0].startswith("cat /proc/driver/nvidia/version"), got["fix"]


def test_the_open_module_already_running_is_not_asked_for_again():
    """The open module's own banner in the paste (its users' reports on the open-gpu-kernel-modules tracker, e.g.
    https://github.com/NVIDIA/open-gpu-kernel-modules/issues/872): another cause (BIOS BAR settings, GSP)."""
    text = BLACKWELL_NO_DEVICES + "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.09  Release Build\n"
    assert "open-kernel-module-required" not in _paste(text)


def test_a_blackwell_gpu_that_works_is_left_alone():
    text = "GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-0e5b3c4a-1b2c-4d5e-8f90-123456789abc)\nnvidia-open is installed\n"
    assert "open-kernel-module-required" not in _paste(text + "torch.cuda.is_available(): True\n")


def test_fedoras_fallback_to_nouveau_is_the_module_missing_and_rebuilt_with_akmods():
    """RPM Fusion's nvidia-fallback service: "NVIDIA kernel module missing. Falling back to nouveau"
    (https://github.com/gridhead/nvidia-auto-installer-for-fedora-linux/issues/78; "... not found. Falling back to
    Nouveau." in .../issues/288)."""
    for line in (
        "Fedora 35 NVIDIA kernel module missing. Falling back to nouveau",
        'the start screen of KDE Plasma shows "NVIDIA kernel module not found. Falling back to Nouveau." even after reboots',
    ):
        f = _codes(line, os="Fedora Linux 39 (KDE Plasma)")["kernel-module-missing"]
        assert "akmods" in f.title and "sudo akmods --force && sudo dracut --force" in f.fix.commands, (f.title, f.fix.commands)
