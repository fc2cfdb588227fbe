"""Issue 21, driver area (round 3): the diagnosis reasons from what a report names (the NVIDIA driver, the machinery
that builds its kernel module, Secure Boot, nouveau, a WSL kernel release, another program's driver check), not from
one sentence. Every text here is real, from a public thread (URL beside it); the texts of the blind batches b13-b15
(tests/data/blind, scored by test_blind_batches) are read here only through the rules they led to, and each rule is
held here to texts from OTHER threads than the ones it was written from.
"""

from __future__ import annotations

from cudadoctor import registry
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)


def _got(text: str, **system):
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": text}
    if system:
        facts["system"] = dict(system)
    rep = diagnose(facts, REG)
    # the rules' findings (the learned fallback, a separate check, is measured by its own tests)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


# ---------------------------------------------------------------- kernel module not built: the reporter's words

# https://github.com/OpenMandrivaAssociation/distribution/issues/1102 (no make.log for the new kernel: headers missing)
MANDRIVA = (
    'Please help me, because "nvidia driver does not work after new kernel update" is a very abstract statement.\n'
    "There is no make.log file in my /var/lib/dkms folder."
)
# https://github.com/negativo17/nvidia-driver/issues/165 (a dkms-nvidia update removed the built module)
NEGATIVO_165 = (
    "I pulled in a minor update to dkms-nvidia, which seemingly deleted my dkms module entirely. After installing this "
    "package and rebooting, the dkms module is complete gone, and running the above two commands is necessary to get "
    "the module to work again."
)
# https://github.com/void-linux/void-packages/issues/54925 (the 570 module does not build for Linux 6.14)
VOID_54925 = (
    "When installing the latest 6.14 kernel:\n> Building DKMS module: nvidia-570.133.07... FAILED!\n"
    "Installation of kernel will complete and the NVIDIA module will not load on next boot."
)


def test_module_not_built_is_read_from_words_of_other_threads():
    for text in (MANDRIVA, NEGATIVO_165, VOID_54925):
        got = _got(text, os="Linux")
        assert "kernel-module-missing" in got, (text[:60], list(got))
        assert "modprobe nvidia" in " ".join(got["kernel-module-missing"].fix.commands)


def test_the_reasoning_needs_the_nvidia_driver_named_and_a_failure():
    # the same machinery, no failure: a healthy upgrade story (https://github.com/negativo17/nvidia-driver/issues/56's answer)
    ok = "After doing that `dkms status` should look like:\nnvidia, 396.45, 4.17.14-202.fc28.x86_64, x86_64: installed"
    assert "kernel-module-missing" not in _got(ok, os="Fedora 28")
    # a failure of a DKMS module that is not NVIDIA's
    other = "Error! Bad return status for module build on kernel: 6.2.6-zen1-1-zen (x86_64) for module v4l2loopback"
    assert "kernel-module-missing" not in _got(other, os="Arch Linux")


def test_not_on_windows_nor_when_cuda_works():
    assert "kernel-module-missing" not in _got(VOID_54925, os="Windows 10")
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": VOID_54925}
    facts["torch"] = {"cuda_available": True}
    assert "kernel-module-missing" not in {f.code for f in diagnose(facts, REG).findings if f.source != "cudadoctor:learned"}


# ---------------------------------------------------------------- Secure Boot: the other cause of "module missing" at boot

# https://github.com/gridhead/nvidia-auto-installer-for-fedora-linux/issues/78 (the boot message of RPM Fusion's packages)
FALLBACK = "NVIDIA kernel module missing. Falling back to nouveau"


def test_module_missing_at_boot_with_no_build_failure_names_secure_boot_as_possible():
    got = _got(FALLBACK, os="Fedora Linux 38")
    assert got["kernel-module-missing"].severity == "error"
    sb = got["secure-boot-module-blocked"]
    assert sb.severity == "warning" and "mokutil --sb-state" in " ".join(sb.fix.commands)


def test_a_build_failure_shown_keeps_secure_boot_out():
    text = FALLBACK + "\nakmods: nvidia 550.78 failed to build for kernel 6.9.4-200.fc40.x86_64"
    assert "secure-boot-module-blocked" not in _got(text, os="Fedora Linux 40")


# ---------------------------------------------------------------- nouveau said to stay loaded

# https://github.com/negativo17/nvidia-driver/issues/75 (f29: nouveau loaded first despite rd.driver.blacklist)
NOUVEAU = "it seems that nvidia cannot be loaded because nouveau is always present an loaded!!"


# Two threads the rule was not written from:
# https://github.com/negativo17/nvidia-driver/issues/37 (its title)
NOUVEAU_37 = "Nouveau driver is still loaded despite apparently successful install of nvidia binaries, Fedora 27"
# https://github.com/NixOS/nixpkgs/issues/29514
NOUVEAU_NIX = "the module appears to blacklist nouveau but the kernal log show it being loaded before nvidia."


def test_nouveau_said_to_stay_loaded():
    for text in (NOUVEAU, NOUVEAU_37, NOUVEAU_NIX):
        got = _got(text, os="Linux")
        assert got["nouveau-bound"].severity == "warning" and "kernel-module-missing" not in got, (text[:50], list(got))
    assert "nouveau-bound" not in _got("nouveau is not loaded any more, nvidia works", os="Fedora 29")


# ---------------------------------------------------------------- driver too old in FFmpeg's words

# https://github.com/GyanD/codexffmpeg/issues/161
NVENC_121 = "[h264_nvenc @ 000002faa5950d40] Driver does not support the required nvenc API version. Required: 12.1 Found: 12.0"
# https://github.com/googlecolab/colabtools/issues/3187
NVENC_111 = (
    "[hevc_nvenc @ 0x55defbb87c00] Driver does not support the required nvenc API version. Required: 11.1 Found: 11.0\n"
    "[hevc_nvenc @ 0x55defbb87c00] The minimum required Nvidia driver for nvenc is 470.57.02 or newer"
)


def test_ffmpeg_nvenc_driver_check_is_driver_too_old():
    f = _got(NVENC_121)["driver-too-old"]
    assert "FFmpeg" in f.title and "12.1" in f.title
    f = _got(NVENC_111, os="Linux")["driver-too-old"]
    assert "needs driver >= 470.57.02" in f.fix.commands[0] and "torch" not in f.title


# ---------------------------------------------------------------- NVML mismatch in any punctuation

# https://github.com/NVIDIA/deepops/issues/1186 (the reporter links the Stack Overflow question instead of the line)
DEEPOPS = (
    "while installing on a machine, I got an error stated in "
    "https://stackoverflow.com/questions/43022843/nvidia-nvml-driver-library-version-mismatch"
)


def test_nvml_mismatch_from_the_question_everyone_links():
    assert "nvml-driver-mismatch" in _got(DEEPOPS, os="Ubuntu 18.04")
    assert "nvml-driver-mismatch" in _got("NVML: Driver/library version mismatch", os="Linux")


# ---------------------------------------------------------------- WSL 2 kernels older than CUDA on WSL needs


def test_an_old_wsl2_kernel_is_named_with_the_minimum():
    # https://github.com/vllm-project/vllm/issues/6184
    got = _got("Found no NVIDIA driver on your system.", os="Linux", kernel="5.10.16.3-microsoft-standard-WSL2")
    f = got["wsl-gpu-unsupported"]
    assert "5.10.16.3" in f.title and "5.10.43.3" in f.title and "wsl --update" in f.fix.commands[0]
    assert f.severity == "warning"  # CUDA's WSL preview ran on kernels from 4.19.121: once fine, now a cause to remove
    got = _got("Found no NVIDIA driver on your system.", os="Linux", kernel="4.19.104-microsoft-standard")
    assert got["wsl-gpu-unsupported"].severity == "error"
    # a current WSL 2 kernel: not this cause
    got = _got("Found no NVIDIA driver on your system.", os="Linux", kernel="5.15.153.1-microsoft-standard-WSL2")
    assert "wsl-gpu-unsupported" not in got


# ---------------------------------------------------------------- a container named by its OS line or its image tag


def test_a_container_without_gpus_from_the_os_line():
    # https://github.com/cnstark/pytorch-docker/issues/19 (started without --gpus all)
    got = _got("nvidia-smi: command not found", os="Linux", distro="Ubuntu 20.04 (docker)")
    assert "no-gpu-visible" in got and "no-nvidia-driver" not in got, list(got)


def test_busy_or_unavailable_on_windows_is_not_claimed_as_compute_mode():
    # https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/2986 (a broken driver install; reinstalling fixed it)
    got = _got("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", os="Windows 10")
    f = got["gpu-compute-mode-restricted"]
    assert f.severity == "warning" and "driver install" in f.title
