"""FP8 asked of a GPU without it (session 19, from blind batch b78 and the threads of its class):

- gpu-lacks-fp8: torch's "torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9"
  (aten's FP8 matmul), Triton's "fp8e4nv data type is not supported on CUDA arch < 89" / "type fp8e4nv not supported in
  this architecture": FP8 (e4m3) arithmetic needs Ada (8.9) or Hopper (9.0) and later. Video and image models offer
  "fp8 fast" modes (scaled matmuls) and torch.compile turns fp8 weights into Triton kernels; on Ampere and older GPUs
  those fail. The fp8 weights themselves load on any GPU when the compute runs in bf16/fp16.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.interpret.gpus import gpus, split_by_capability
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

GPU_LACKS_FP8 = Code(
    code="gpu-lacks-fp8",
    title="FP8 arithmetic was asked of a GPU below compute capability 8.9 (before Ada), which has none",
    area="gpu",
    severity="error",
    explanation={
        "what": "A model run with an FP8 'fast' mode, FP8 quantization or torch.compile over fp8 weights fails with "
        "'torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9' or Triton's 'fp8e4nv "
        "data type is not supported on CUDA arch < 89', on an RTX 30xx, A100, A6000 or older GPU.",
        "why": "FP8 (e4m3) matrix multiplies and conversions exist in hardware from Ada (compute capability 8.9: RTX 40xx, "
        "L4, L40) and Hopper (9.0) on. torch's scaled matmul and Triton refuse them below. The install is fine.",
        "confirm": "`nvidia-smi --query-gpu=name,compute_cap --format=csv` (below 8.9).",
        "fix": "Turn the FP8 compute off: pick the model's non-'fast' fp8 option (weights stored in fp8, computed in "
        "bf16/fp16) or a bf16/fp16 model; do not torch.compile fp8 weights; vLLM/SGLang: no --quantization fp8 (or the "
        "weight-only FP8 path the engine offers for older GPUs). Or run on an Ada/Hopper GPU.",
    },
    links=(
        "https://github.com/triton-lang/triton/issues/4319",
        "https://github.com/woct0rdho/triton-windows/issues/30",
        "https://developer.nvidia.com/cuda-gpus",
    ),
)


@check(GPU_LACKS_FP8)
def gpu_lacks_fp8(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, GPU_LACKS_FP8)
    if not said:
        return
    cards = [(str(g.get("name") or "GPU"), g.get("capability")) for g in gpus(fx)]
    low, high = split_by_capability(cards, 89)
    if high and not low:
        return  # every GPU shown has FP8: the message is about another device (or a ROCm part)
    gpu = f"{low[0][0]} (compute capability {low[0][1]})" if low else "this GPU"
    evidence = {said[0]: said[1]}
    if low:
        evidence["gpu"], evidence["compute_capability"] = low[0]
    yield GPU_LACKS_FP8.finding(
        title=f"FP8 needs compute capability 8.9 (Ada) or newer; {gpu} has no FP8: turn the fp8 'fast' / compiled path off",
        evidence=evidence,
        fix=Fix(
            (
                "# choose the model's fp8 option without 'fast' (weights in fp8, compute in bf16/fp16), or a bf16/fp16 model",
                "# do not torch.compile fp8 weights on this GPU; vLLM/SGLang: drop --quantization fp8",
                "nvidia-smi --query-gpu=name,compute_cap --format=csv  # below 8.9: no FP8 arithmetic",
            ),
            "FP8 arithmetic starts at compute capability 8.9 (Ada) and 9.0 (Hopper).",
        ),
    )  # an error even with the GPU unnamed: torch and Triton raise it only for a device that lacks FP8


def register():
    return [gpu_lacks_fp8]
