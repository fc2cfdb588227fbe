"""GTX 16xx cards (TU116/TU117: GTX 1650, 1660, 1660 Ti, 1660 SUPER) giving NaN or black outputs in half precision
(session 17): with the cuDNN 8 of torch's CUDA 11+ builds, fp16 convolutions on these Turing cards without tensor cores
return NaN (pytorch/pytorch#58123, #77955); AMP training shows NaN losses or no progress, Stable Diffusion black
images. The same code runs right in fp32, on the CPU and on other GPUs.

- gtx16-fp16-cudnn-nan: a GTX 16xx named, and wrong numbers described (NaN, black/green images, training that does
  not progress) in the error text or the reporter's words (readers/prose.py: pasted.symptoms). A warning: the GPU and
  the CUDA stack work (PyTorch can use the GPU), fp32 runs right on it.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from cudadoctor.errortext import WRONG_NUMBERS
from cudadoctor.facts import Facts
from cudadoctor.interpret import gpus
from cudadoctor.model import Code, Finding, Fix, check

from ._common import search

GTX16_FP16_CUDNN_NAN = Code(
    code="gtx16-fp16-cudnn-nan",
    title="A GTX 16xx card gives NaN (or black images) in half precision",
    area="gpu",
    severity="warning",
    explanation={
        "what": "On a GTX 1650 / 1660 / 1660 Ti / 1660 SUPER, a model run in half precision (AMP training, .half(), "
        "fp16 inference, Stable Diffusion's default) gives NaN losses or outputs, black or green images, or training "
        "that makes no progress, while the same code is right in fp32, on the CPU and on other GPUs.",
        "why": "These Turing chips (TU116/TU117) have no tensor cores; with the cuDNN 8 of torch's CUDA 11+ builds, "
        "their fp16 convolution paths return NaN (pytorch/pytorch#58123, #77955). torch's CUDA 10.2 builds (cuDNN 7) "
        "did not; no driver or install problem is involved.",
        "confirm": "Run the same step in fp32 (disable AMP / autocast, no .half()): the NaN goes away. "
        '`python -c "import torch; print(torch.cuda.get_device_name(0), torch.backends.cudnn.version())"`.',
        "fix": "Run in fp32 on this card: disable AMP (YOLOv5/ultralytics: amp=False; Lightning: precision=32; "
        "transformers: no fp16=True), drop .half(); Stable Diffusion web UIs: `--precision full --no-half` (or "
        "`--upcast-sampling`), ComfyUI: `--force-fp32`. Or torch.backends.cudnn.enabled = False for the fp16 "
        "convolutions (slower).",
    },
    links=(
        "https://github.com/pytorch/pytorch/issues/58123",
        "https://github.com/pytorch/pytorch/issues/77955",
        "https://github.com/AUTOMATIC1111/stable-diffusion-webui/wiki/Troubleshooting",
    ),
)

#: The GTX 16 series (TU116/TU117) by the names users and tools write: "NVIDIA GeForce GTX 1660 SUPER", "1660ti", "GTX1650".
_GTX16 = re.compile(r"(?<![\d.])(?:gtx\s*)?16[56]0(?:\s*(?:ti|super|s))?(?![\d.])", re.I)


def _gtx16(fx: Facts) -> Optional[str]:
    for g in gpus(fx):
        name = str(g.get("name") or "")
        if _GTX16.search(name):
            return name
    return None


@check(GTX16_FP16_CUDNN_NAN)
def gtx16_fp16_cudnn_nan(fx: Facts) -> Iterator[Finding]:
    gpu = _gtx16(fx)
    if not gpu:
        return
    said = search(fx, WRONG_NUMBERS.pattern)
    stated = next((d for d in fx.dicts("pasted.symptoms") if d.get("kind") == "wrong-numbers"), None)
    if not said and not stated:
        return
    evidence = {"gpu": gpu, said[0] if said else "the reporter": said[1] if said else stated["text"]}  # type: ignore[index]
    yield GTX16_FP16_CUDNN_NAN.finding(
        title=f"{gpu} gives NaN in half precision (fp16 / AMP): run it in fp32",
        evidence=evidence,
        fix=Fix(
            (
                "# run in fp32 on this card: disable AMP / autocast and .half() (ultralytics: amp=False; Lightning: precision=32; transformers: fp16=False)",
                "# Stable Diffusion web UIs: --precision full --no-half (or --upcast-sampling); ComfyUI: --force-fp32",
                'python -c "import torch; print(torch.cuda.get_device_name(0), torch.backends.cudnn.version())"  # the card and the cuDNN in use',
            ),
            "GTX 16xx cards return NaN from fp16 convolutions with the cuDNN 8 of torch's CUDA 11+ builds; fp32 is right.",
        ),
    )


def register():
    return [gtx16_fp16_cudnn_nan]
