"""A TensorRT engine built elsewhere (session 16): serialized engines (.engine, .plan, .trt) load only in the TensorRT
release, and on the GPU model, that built them. TensorRT's own refusals (kb/errors/cuda16.json):

- tensorrt-engine-built-with-other-version: "The engine plan file is not compatible with this version of TensorRT,
  expecting library version X got Y, please rebuild", "Version tag does not match ... Serialized Engine Version",
  "safeVersionRead == safeSerializationVersion", "generated on an incompatible device, expecting compute X got Y".

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Dict, Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

TENSORRT_ENGINE_BUILT_WITH_OTHER_VERSION = Code(
    code="tensorrt-engine-built-with-other-version",
    title="A TensorRT engine file was built by another TensorRT release or on another GPU",
    area="libraries",
    severity="error",
    explanation={
        "what": 'Loading a serialized TensorRT engine (.engine / .plan) fails: "The engine plan file is not compatible '
        'with this version of TensorRT, expecting library version X got Y, please rebuild", "Version tag does not '
        'match ... Serialized Engine Version", "Engine deserialization failed", or "generated on an incompatible '
        'device".',
        "why": "An engine is compiled for one TensorRT release and one GPU model; it is not portable. It was built on "
        "another machine, in another container or JetPack, or before TensorRT was upgraded (an upgrade of JetPack, "
        "of the TensorRT pip wheel, or of the image).",
        "confirm": '`python -c "import tensorrt; print(tensorrt.__version__)"` (or `dpkg -l | grep nvinfer`) where it '
        "runs, against the version in the message; the GPU in the message against `nvidia-smi`.",
        "fix": "Delete the engine file and rebuild it from the ONNX (or the model) with the TensorRT and GPU that will "
        "run it (trtexec --onnx=model.onnx --saveEngine=model.engine, or the project's export step); or run the "
        "TensorRT release that built it.",
    },
    links=(
        "https://docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/advanced.html#version-compatibility",
        "https://github.com/dusty-nv/jetson-inference/issues/426",
    ),
)

_VERSIONS = re.compile(
    r"expecting library version ([\d.]+) got ([\d.]+)|Current Version: (\d+), Serialized Engine Version: (\d+)"
)
_DEVICE = re.compile(r"incompatible device, expecting compute ([\d.]+) got compute ([\d.]+)")


@check(TENSORRT_ENGINE_BUILT_WITH_OTHER_VERSION)
def tensorrt_engine_built_with_other_version(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, TENSORRT_ENGINE_BUILT_WITH_OTHER_VERSION)
    if not said:
        return
    evidence: Dict[str, object] = {said[0]: said[1]}
    dev = _DEVICE.search(said[1])
    m = _VERSIONS.search(said[1])
    if m and m.group(2) and not m.group(2).strip("0."):
        # "got 0.0.0": the file's header holds no version at all — not an engine as TensorRT wrote it (truncated,
        # written in text mode on Windows: TensorRT#574: its own plan read back at once), so no other release is shown
        return
    if dev:
        title = f"The TensorRT engine was built on a GPU of compute capability {dev.group(1)}; this GPU is {dev.group(2)}"
    elif m and m.group(1):
        # TensorRT's wording: "expecting library version <this library's> got <the engine's>" (jetson-inference#426: an
        # upgraded JetPack's 5.1.6 reading a 5.0.6 engine; tensorrtx#664: an 8.0.1 engine read by 8.0.0)
        title = f"The TensorRT engine was built with TensorRT {m.group(2)}; this TensorRT is {m.group(1)}"
        evidence.update(engine_tensorrt=m.group(2), installed_tensorrt=m.group(1))
    elif m:
        title = f"The TensorRT engine's serialization version is {m.group(4)}; this TensorRT reads version {m.group(3)}"
    else:
        title = "The TensorRT engine was built by another TensorRT release than the one loading it"
    yield TENSORRT_ENGINE_BUILT_WITH_OTHER_VERSION.finding(
        title=title + ": rebuild the engine where it runs",
        evidence=evidence,
        fix=Fix(
            (
                'python -c "import tensorrt; print(tensorrt.__version__)"  # or: dpkg -l | grep nvinfer',
                "rm <model>.engine  # then rebuild it from the ONNX with this TensorRT, on this GPU:",
                "trtexec --onnx=<model>.onnx --saveEngine=<model>.engine  # or the project's own export step",
            ),
            "Serialized TensorRT engines are tied to the TensorRT release and GPU model that built them.",
        ),
    )


def register():
    return [tensorrt_engine_built_with_other_version]
