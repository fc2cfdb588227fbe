"""What a reporter's text states outside any error line, read by the paste reader (readers/prose.py, into facts) and by
the checks (over error texts): TensorFlow's version, wrong numbers from the GPU, a CUDA tensor printed. Pure.
"""

from __future__ import annotations

import re

#: TensorFlow's version stated: "tensorflow==2.12.0", "TensorFlow 2.13", "Tensorflow Version: v2.12.0-rc1-12-g0db597d 2.12.0"
#: (an issue form's heading joined to its value), "Tensor Flow Version: 2.12.0", "tensorflow-gpu 2.4.1", "tf 2.15",
#: "my tensorflow version is 2.12.0"; "tf-nightly" (always a release after the last stable one). Only 1.x and 2.x, and
#: only labels, separators or "version" between name and number ("tensorflow with CUDA 11.2" is not TensorFlow's).
TENSORFLOW_VERSION = re.compile(
    r"(?<![A-Za-z0-9_./-])(?:(?:tensor\s?flow(?:[-_](?:gpu|intel|cpu))?|tf)(?![A-Za-z])"
    r"(?:[\s:=,()#*`'\"-]|version|ver\.?|\bis\b|是|为){0,12}v?(?P<v>[12]\.\d{1,2}(?:\.\d{1,2})?)(?![\d.]*\d)"
    r"|(?P<nightly>tf[-_]nightly)\b)",
    re.I,
)

#: Wrong numbers from the GPU, in the reporter's words or a program's: NaN losses/outputs ("box and obj are nan",
#: "loss: nan", "returns NaN"), Stable Diffusion web UI's NansException, black or green images, training that does not
#: progress.
WRONG_NUMBERS = re.compile(
    r"\b(?:are|is|be|become|becomes|became|gives?|returns?|produces?|outputs?|all|got|get|=|:)\s*(?:all\s+)?nans?\b|"
    r"\bloss(?:es)?\W{0,3}nans?\b|\bnan\s+(?:values?|loss(?:es)?|outputs?|tensors?|errors?)\b|NansException|"
    r"tensor with all NaNs|\b(?:black|green)\s+(?:images?|outputs?|pictures?|results?|squares?)\b|"
    r"(?:\b(?:no|not|without)|n't)\s+(?:\w+\s+){0,4}training\s+(?:advance|progress)\b",
    re.I,
)

#: A CUDA tensor as torch prints it ("tensor([0, 1, 2, 3], device='cuda:0')"): printing one runs torch's kernels on the device
#: (its formatter's isfinite / ne / masked_select), so torch's build has code for that GPU. Read by readers/issue.py
#: (pasted.cuda_tensor_printed) and checks/arch.kernel_owner (session 21).
CUDA_TENSOR_PRINTED = re.compile(r"\btensor\(\[[^\n]{0,400}?device='cuda(?::\d+)?'")
#: torch's asynchronous allocator named as in use: the backend's own name (ComfyUI prints it at the end of its "Device:"
#: line), ComfyUI's --cuda-malloc switch, a launcher's cuda_malloc setting. Read by readers/issue.py (pasted.allocator)
#: and checks/alloc21.py (session 22: b130's ComfyUI device line sat in prose the reader set aside).
ASYNC_ALLOCATOR = re.compile(r"(?i)cudaMallocAsync|--(?:disable-)?cuda-malloc\b|\bcuda_malloc\b")
#: Programs that turn torch's cudaMallocAsync allocator on by default: ComfyUI (its cuda_malloc.py sets
#: backend:cudaMallocAsync unless --disable-cuda-malloc, or the GPU is on its list of cards without support).
ASYNC_ALLOCATOR_DEFAULT = re.compile(r"(?i)\bComfyUI\b")

#: ROCm said to run an AMD GPU (a +rocm build, torch.version.hip, HIP's own error, "on ROCm", "ROCm 6.1", "for rocm?"):
#: torch.cuda is ROCm's API there, so an AMD GPU is no CUDA-on-AMD mix-up (session 23, b162: torchtune's bf16 check on
#: a 7900 XTX; read by checks/codes5.py, recorded by readers/issue.py as pasted.rocm_in_use).
ROCM_IN_USE = re.compile(
    r"(?i)\+rocm\d|torch\.version\.hip|\bhipErrorNoBinaryForGpu\b|\b(?:on|with|under|using|for)\s+ROCm\b|\bROCm\s+\d"
)
