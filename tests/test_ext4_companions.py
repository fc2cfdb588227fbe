"""Issue 21, task ext4: what a companion package or extension says about ITSELF. An extension whose CUDA code was
never compiled (mmcv's op registry, GroundingDINO's missing _C on its CUDA path, pytorch3d's shortened words), a
companion's own CPU build beside a working torch (jaxlib, onnxruntime, bitsandbytes, llama.cpp), a build tool's own
toolkit-vs-torch CUDA check (torch.utils.cpp_extension in any language, DeepSpeed, apex: both versions read from the
message itself, so a paste with no facts is diagnosed), torch's 'Invalid device id'. Every text is real, from a
public thread (URL beside it), and each rule is held here to threads other than the blind-batch cases it came from
(b15-16/17, b16-03/05/22/25/27/45/48/49/52, b17-26).
"""

from __future__ import annotations

from cudadoctor import registry
from cudadoctor.checks.builds import build_tool_cuda_pair
from cudadoctor.checks.companions import cpu_build_of
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)


def _got(text: str, torch=None, **system):
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": text}
    if system:
        facts["system"] = dict(system)
    if torch:
        facts["torch"] = dict(torch)
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


# ---------------------------------------------------------------- extension-built-without-cuda

# https://github.com/open-mmlab/mmdetection/issues/11530 (torch 2.2.1+cu118 sees the GPU; mmcv has no CUDA ops)
MMCV_11530 = (
    '  File "d:\\dlp\\anaconda\\envs\\mmdetection\\lib\\site-packages\\mmcv\\ops\\nms.py", line 27, in forward\n'
    "    inds = ext_module.nms(\nRuntimeError: nms_impl: implementation for device cuda:0 not found."
)
# https://github.com/google/RB-Modulation/issues/2 (GroundingDINO built without CUDA_HOME)
GDINO_RBM = (
    "File /opt/conda/envs/rbm/lib/python3.9/site-packages/groundingdino/models/GroundingDINO/ms_deform_attn.py:53, in "
    "MultiScaleDeformableAttnFunction.forward(ctx, value, value_spatial_shapes, value_level_start_index, "
    "sampling_locations, attention_weights, im2col_step)\n"
    "     52     ctx.im2col_step = im2col_step\n"
    "---> 53     output = _C.ms_deform_attn_forward(\n"
    "     54         value,\n\nNameError: name '_C' is not defined"
)
# https://github.com/IDEA-Research/GroundingDINO/issues/303 (the package's own warning, then the NameError)
GDINO_303 = (
    "/data/pratibha/GroundingDINO/groundingdino/models/GroundingDINO/ms_deform_attn.py:31: UserWarning: Failed to load "
    'custom C++ ops. Running on CPU mode Only!\n  warnings.warn("Failed to load custom C++ ops. Running on CPU mode Only!")\n'
    "NameError: name '_C' is not defined"
)
# https://github.com/pytorch/pytorch/issues/1633 (torch's OWN _C: python started inside a source checkout)
TORCH_OWN_C = (
    '>>> import torch\nTraceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
    '  File "/home/dusty/workspace/jetson-reinforcement/build/pytorch/torch/__init__.py", line 55, in <module>\n'
    "    __all__ += [name for name in dir(_C)\nNameError: name '_C' is not defined"
)
# https://github.com/facebookresearch/pytorch3d/issues/318 (the reporter's shortening of 'Not compiled with GPU support')
P3D_318 = 'The image is built successfully. however, when I run the image, I still get "Not compiled with gpu" error.'


def test_an_extensions_own_words_that_its_cuda_code_is_missing():
    for text in (MMCV_11530, GDINO_RBM, GDINO_303, P3D_318):
        got = _got(text, os="Linux")
        assert "extension-built-without-cuda" in got, (text[:60], list(got))
        assert "FORCE_CUDA=1" in " ".join(got["extension-built-without-cuda"].fix.commands)


def test_torchs_own_missing_c_is_not_an_extension_built_without_cuda():
    assert "extension-built-without-cuda" not in _got(TORCH_OWN_C, os="Linux")


# ---------------------------------------------------------------- companion-cpu-only-build, named by the package

# https://github.com/kuixu/alphafold/issues/8
JAX_ALPHAFOLD = (
    "I0820 16:00:20.281177 140257858221888 xla_bridge.py:212] Unable to initialize backend 'gpu': Not found: Could not "
    'find registered platform with name: "cuda". Available platform names are: Interpreter Host'
)
# https://github.com/s9roll7/animatediff-cli-prompt-travel/issues/206 (onnxruntime and onnxruntime-gpu both installed)
ORT_206 = (
    "onnxruntime_inference_collection.py:69: UserWarning: Specified provider 'CUDAExecutionProvider' is not in "
    "available provider\nnames.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'"
)
# https://github.com/bitsandbytes-foundation/bitsandbytes/issues/558 (Windows: bitsandbytes loads its CPU library)
BNB_558 = (
    "bin C:\\Users\\apb\\Documents\\Projects\\My_AI_Journey\\llm_for_developers\\llm\\Lib\\site-packages\\bitsandbytes"
    "\\libbitsandbytes_cpu.so\nFalse"
)
# https://github.com/ggml-org/llama.cpp/issues/9153
LLAMA_9153 = (
    "warning: not compiled with GPU offload support, --gpu-layers option will be ignored\n"
    "warning: see main README.md for information on enabling GPU BLAS support"
)


def test_a_companions_cpu_build_is_named_with_its_own_cure():
    for text, pkg, cure in (
        (JAX_ALPHAFOLD, "jaxlib", "jax[cuda12]"),
        (ORT_206, "onnxruntime", "onnxruntime-gpu"),
        (BNB_558, "bitsandbytes", "bitsandbytes"),
        (LLAMA_9153, "llama-cpp-python", "GGML_CUDA"),
    ):
        got = _got(text, os="Linux")
        assert "companion-cpu-only-build" in got, (pkg, list(got))
        f = got["companion-cpu-only-build"]
        assert f.title.startswith(pkg), f.title
        assert cure in " ".join(f.fix.commands), f.fix.commands


# FaceFusion offers only the providers onnxruntime lists: its users' words for the CPU package (b16-17's thread aside)
FACEFUSION = (
    # https://github.com/facefusion/facefusion/issues/156
    "1.3.1   EXECUTION PROVIDERS only azure  and cpu,not have cuda and tensorrt",
    # https://github.com/facefusion/facefusion/issues/48
    "run.py: error: argument --execution-providers: invalid choice: 'cuda' (choose from 'cpu')",
    # https://github.com/facefusion/facefusion-pinokio/issues/29
    "No Cuda option for Execution Providers",
    # https://github.com/facefusion/facefusion/issues/771
    "when installing version 3.0.0 only CPU shows for execution provider",
)


def test_an_apps_words_for_onnxruntimes_missing_cuda_provider():
    for text in FACEFUSION:
        got = _got(text, os="Windows 10")
        assert "companion-cpu-only-build" in got, (text, list(got))
        assert got["companion-cpu-only-build"].title.startswith("onnxruntime")
    assert "companion-cpu-only-build" not in _got("python run.py --execution-providers cuda", os="Windows 10")


def test_llama_cpps_words_are_not_an_extension_built_without_cuda():
    assert "extension-built-without-cuda" not in _got(LLAMA_9153, os="Linux")


def test_the_package_is_named_by_the_matched_line_first():
    assert cpu_build_of('Could not find registered platform with name: "cuda"', "import onnxruntime")[0] == "jaxlib"
    assert cpu_build_of("facefusion EXECUTION PROVIDERS NOT cuda options?")[0] == "onnxruntime"


# ---------------------------------------------------------------- build tools' own CUDA checks -> cuda-toolkit-mismatch

# https://github.com/deepspeedai/DeepSpeed/issues/2902
DS_2902 = (
    "Exception: >- DeepSpeed Op Builder: Installed CUDA version 12.0 does not match the version torch was compiled "
    "with 11.7, unable to compile cuda/cpp extensions without a matching cuda version."
)
# https://github.com/NVIDIA/apex/issues/1133 (apex prints `nvcc -V` before its own check)
APEX_1133 = (
    "Compiling cuda extensions with\nnvcc: NVIDIA (R) Cuda compiler driver\n"
    "Cuda compilation tools, release 11.2, V11.2.152\nfrom /usr/local/cuda/bin\n\n"
    "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to "
    "compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 10.2."
)
# https://github.com/boschresearch/DroidCalib/issues/5 (torch's own message)
TORCH_DROID = (
    "RuntimeError:\nThe detected CUDA version (12.1) mismatches the version that was used to compile PyTorch (11.3).\n"
    "Please make sure to use the same CUDA versions."
)
# https://github.com/continue-revolution/sd-webui-segment-anything/issues/27 (A1111's Chinese of torch's message)
TORCH_ZH = "检测到的 CUDA 版本 (12.1) 与用于编译 PyTorch (11.8) 的版本不匹配。请确保使用相同的 CUDA 版本。"


def test_the_versions_come_from_the_build_tools_own_message():
    assert build_tool_cuda_pair(DS_2902) == ("12.0", "11.7")
    assert build_tool_cuda_pair(APEX_1133) == ("11.2", "10.2")
    assert build_tool_cuda_pair(TORCH_DROID) == ("12.1", "11.3")
    assert build_tool_cuda_pair(TORCH_ZH) == ("12.1", "11.8")
    # a torch release in parentheses is not a CUDA version
    assert build_tool_cuda_pair("CUDA available (12.1), PyTorch version (2.1)") is None


def test_a_paste_with_no_facts_gets_the_mismatch_from_the_message():
    for text, have, want in ((DS_2902, "12.0", "11.7"), (APEX_1133, "11.2", "10.2"), (TORCH_ZH, "12.1", "11.8")):
        got = _got(text)
        assert "cuda-toolkit-mismatch" in got, (text[:50], list(got))
        f = got["cuda-toolkit-mismatch"]
        assert f.severity == "error" and f"{have} differs from torch's CUDA {want}" in f.title, f.title


# ---------------------------------------------------------------- device-ordinal-invalid: torch's own assertion

# https://github.com/torralba-lab/im2recipe-Pytorch/issues/11 (device_ids=[0,1,2,3], device_count() 1)
IM2RECIPE = (
    '  File "/home/foodvision/anaconda3/envs/py27/lib/python2.7/site-packages/torch/cuda/__init__.py", line 292, in '
    'get_device_properties\n    raise AssertionError("Invalid device id")\nAssertionError: Invalid device id'
)


def test_torchs_invalid_device_id_is_an_index_past_the_gpus():
    got = _got(IM2RECIPE, os="Linux")
    assert "device-ordinal-invalid" in got
    # no GPU visible at all (CUDA_VISIBLE_DEVICES="" gives the same assertion): not an index problem
    assert "device-ordinal-invalid" not in _got(IM2RECIPE, torch={"device_count": 0}, os="Linux")
