"""The GPU's video engines (NVENC / NVDEC) asked for and not there (session 23, from blind batch b149 and the threads
of each class):

- gpu-lacks-nvenc: ffmpeg's "OpenEncodeSessionEx failed: unsupported device (2)" (NV_ENC_ERR_UNSUPPORTED_DEVICE), or
  an encoder finding "No NVENC capable devices" / a "GPU encoder failed" on a GPU that has no NVENC: many low-end and
  mobile parts (GT 1030, MX1xx-MX450, 9xxM) and mining cards ship without it (kb/gpu_video_engines.json). CUDA works on
  them; only hardware video encoding does not (HandBrake#1998, #2204; gyroflow#403, #568).
- container-gpu-capabilities-lack-video: "Cannot load libnvidia-encode.so.1" / "Cannot load libnvcuvid.so.1" in a
  container: the NVIDIA Container Toolkit mounts the driver's encode/decode libraries only for the ``video``
  capability, which NVIDIA_DRIVER_CAPABILITIES (default compute,utility) or Compose's capabilities leave out
  (styler00dollar/VSGAN-tensorrt-docker#42; blakeblackshear/frigate's NVIDIA docs). Outside a container the same
  words mean the driver's libraries are not installed (a headless or compute-only driver package): a likely cause.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret.gpus import gpus
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, kb, text_of
from ._containers import container_kind

GPU_LACKS_NVENC = Code(
    code="gpu-lacks-nvenc",
    title="The GPU has no hardware video encoder (NVENC)",
    area="gpu",
    severity="error",
    explanation={
        "what": "ffmpeg's h264_nvenc / hevc_nvenc (HandBrake, OBS, Gyroflow, Tdarr, a recorder) fails with "
        "'OpenEncodeSessionEx failed: unsupported device (2)' or 'No NVENC capable devices found', or an app says its GPU "
        "encoder failed and renders on the CPU.",
        "why": "NVENC is a separate engine on the chip. Many low-end and mobile GPUs (GT 1030, MX110-MX450, 9xxM) and "
        "mining cards (P106-100) have none or have it disabled; CUDA still works on them.",
        "confirm": "Look the GPU up in NVIDIA's Video Encode and Decode GPU Support Matrix (NVENC column); "
        "`ffmpeg -f lavfi -i testsrc -t 1 -c:v h264_nvenc -f null -` fails the same way.",
        "fix": "Encode on the CPU (libx264/libx265) or with another hardware encoder (Intel Quick Sync, AMD AMF); GPU "
        "decoding (NVDEC) and CUDA filters may still work. Hardware encoding needs a GPU with NVENC.",
    },
    links=(
        "https://developer.nvidia.com/video-encode-decode-support-matrix",
        "https://www.github.com/obsproject/obs-studio/wiki/NVENC-support-in-OBS",
        "https://github.com/HandBrake/HandBrake/issues/1998",
        "https://github.com/gyroflow/gyroflow/issues/568",
    ),
)

CONTAINER_GPU_CAPABILITIES_LACK_VIDEO = Code(
    code="container-gpu-capabilities-lack-video",
    title="The container was given the GPU without the video capability: NVENC/NVDEC libraries are not mounted",
    area="system",
    severity="error",
    explanation={
        "what": "ffmpeg (or decord, a transcoder, Frigate, Jellyfin) in a container fails with 'Cannot load "
        "libnvidia-encode.so.1' or 'Cannot load libnvcuvid.so.1', while CUDA itself works there.",
        "why": "The NVIDIA Container Toolkit mounts only the driver libraries of the capabilities asked for. The default "
        "(NVIDIA_DRIVER_CAPABILITIES=compute,utility) has no 'video': the encoder (libnvidia-encode) and decoder "
        "(libnvcuvid) libraries stay outside.",
        "confirm": "ls /usr/lib/x86_64-linux-gnu/ | grep -E 'nvidia-encode|nvcuvid'  # in the container: nothing listed; "
        "echo $NVIDIA_DRIVER_CAPABILITIES",
        "fix": "Start the container with -e NVIDIA_DRIVER_CAPABILITIES=compute,video,utility (or =all); Compose: the "
        "same under environment (once: a second environment key replaces the first), or capabilities: [gpu, video]. "
        "Recreate the container.",
    },
    links=(
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
        "https://github.com/styler00dollar/VSGAN-tensorrt-docker/issues/42",
    ),
)


# ---------------------------------------------------------------- NVENC

#: An encoder asked for and refused or failing, in ffmpeg's, HandBrake's and apps' words.
_ENCODER_FAILED = re.compile(
    r"No (?:NVENC )?capable devices found|OpenEncodeSessionEx failed|GPU encoder failed|NVENC\b[^\n]{0,60}?"
    r"(?:fail|not (?:available|supported|work))|(?:hardware|GPU) (?:video )?encod\w*[^\n]{0,40}?(?:fail|not (?:available|supported|work))",
    re.I,
)


def _name_rx(name: str) -> "re.Pattern[str]":
    """A table name as a word in a GPU name or a text: 'GeForce MX230' also as 'MX230', 'MX 230', 'mx230'."""
    core = re.sub(r"^(?:GeForce|Quadro)\s+", "", name)
    core = re.sub(r"\s+", r"\\s*", re.escape(core).replace("\\ ", " "))
    return re.compile(rf"(?<![\w-]){core}(?![\w-])", re.I)


def _without_nvenc(names: List[str]) -> Optional[Tuple[str, bool]]:
    """(the table's name, certain) of the first GPU or text naming a GPU without NVENC; certain is False for the parts
    sold in two revisions, one with NVENC."""
    table = kb()._load("gpu_video_engines")
    for group, certain in (("no_nvenc", True), ("some_without_nvenc", False)):
        for entry in table[group]:
            rx = _name_rx(entry)
            if any(rx.search(n) for n in names):
                return entry, certain
    return None


@check(GPU_LACKS_NVENC)
def gpu_lacks_nvenc(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, GPU_LACKS_NVENC)
    text = text_of(fx)
    failed = _ENCODER_FAILED.search(text)
    names = [str(g.get("name")) for g in gpus(fx) if g.get("name")] + [text]
    gpu = _without_nvenc(names) if (said or failed) else None
    if not said and not gpu:
        return
    evidence = {said[0]: said[1]} if said else {"error text": failed.group(0) if failed else None}
    if gpu:
        evidence["gpu_without_nvenc"] = f"{gpu[0]} (kb/gpu_video_engines.json)"
    certain = bool(said) or bool(gpu and gpu[1])
    who = gpu[0] if gpu else "This GPU"
    yield GPU_LACKS_NVENC.finding(
        title=("" if certain else "Likely: ")
        + f"{who} has no hardware video encoder (NVENC): encode on the CPU or with another encoder",
        evidence=evidence,
        fix=Fix(
            (
                "# check the GPU in NVIDIA's Video Encode and Decode GPU Support Matrix (NVENC column)",
                "ffmpeg -i INPUT -c:v libx264 -preset fast OUTPUT  # CPU encoding (or the app's CPU / x264 option)",
                "# Intel Quick Sync (h264_qsv) or AMD AMF (h264_amf) if the machine has one; NVDEC decoding may still work",
            ),
            "NVENC is a separate engine that these GPUs lack or have disabled; CUDA itself is unaffected.",
        ),
        severity=None if certain else "warning",
    )


# ---------------------------------------------------------------- the video capability in containers


@check(CONTAINER_GPU_CAPABILITIES_LACK_VIDEO)
def container_gpu_capabilities_lack_video(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, CONTAINER_GPU_CAPABILITIES_LACK_VIDEO)
    if not said:
        return
    kind = container_kind(fx)
    evidence = {said[0]: said[1]}
    if kind:
        evidence["container"] = kind
    yield CONTAINER_GPU_CAPABILITIES_LACK_VIDEO.finding(
        title=("" if kind else "Likely (if this runs in a container): ")
        + "the driver's video libraries (NVENC/NVDEC) are not there: give the container the video capability"
        + ("" if kind else ", or install the driver's encode/decode libraries"),
        evidence=evidence,
        fix=Fix(
            (
                "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,video,utility ...  # or =all",
                "# Compose: environment: NVIDIA_DRIVER_CAPABILITIES=all (one environment key only), or capabilities: [gpu, video]",
                "docker compose up -d --force-recreate  # capabilities apply when the container is created",
            )
            + (
                ()
                if kind
                else (
                    "# not in a container: install the driver's libnvidia-encode / libnvidia-decode package for your driver branch",
                )
            ),
            "The NVIDIA Container Toolkit mounts libnvidia-encode and libnvcuvid only for the 'video' capability.",
        ),
        severity=None if kind else "warning",
    )


def register():
    return [gpu_lacks_nvenc, container_gpu_capabilities_lack_video]
