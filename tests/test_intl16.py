"""Session 16's classes from blind batch b36 (Chinese/Japanese threads), each with its real wordings and negatives:
library names written against CJK text, localised "not found" words and placeholder DLL names, torch's own cuDNN
missing, cuDNN statuses that name no single cause, the dispatcher's cut message, "the GPU is not used" in other
languages, a +cuXXX pin searched on PyPI, pip's resolver conflict lines, CUDA on PATH said to be the cause, and the
open kernel modules on a pre-Turing GPU (kb/errors/intl16.json, kb/errors/torch-builds.json)."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor.errortext import missing_libraries, normalize

# --- the cleaner: CJK text touching a library or GPU name -------------------------------------------------------------


@pytest.mark.parametrize(
    "text, name",
    [
        ("import fluid提示找不到libcudart.so.9.0", "libcudart.so.9.0"),  # PaddlePaddle/Paddle#17647 (title)
        ("遇到终端显示cublasxx.dll不存在”的错误", "cublasxx.dll"),  # jianchang512/stt (cuBLAS DLL pack FAQ)
        ("[error]请打开 github.com/jianchang512/pyvideotrans 查看常见问题【缺少cublasxx.dll]", "cublasxx.dll"),
        (
            "Library cublas64_11.dll is not found or cannot be loaded，报错，只能用cuda11吗？",
            "cublas64_11.dll",
        ),  # billwuhao/ComfyUI_gemmax#2
    ],
)
def test_a_library_name_beside_cjk_text_is_read(text, name):
    got = missing_libraries(normalize(text))
    assert [m.name for m in got] == [name]


def test_the_cleaner_spaces_cjk_from_ascii_but_keeps_the_text():
    assert normalize("显卡是RTX3090，CUDA版本12.1") == "显卡是 RTX3090,CUDA 版本 12.1"
    assert normalize("plain ASCII text stays as it is") == "plain ASCII text stays as it is"


@pytest.mark.parametrize(
    "text",
    [
        "cublas64_12.dll version 12.1.3.1 loaded",  # no failure word
        "我的显卡是3090，cudnn64_8.dll 在 bin 目录里",  # named, not said to be missing
    ],
)
def test_a_named_library_without_a_failure_is_not_missing(text):
    assert missing_libraries(normalize(text)) == []


def test_chinese_title_naming_a_missing_runtime_is_diagnosed(tmp_path):
    # PaddlePaddle/Paddle#17647: the title is the only line naming the library
    text = "import fluid提示找不到libcudart.so.9.0\n运行release版paddle，报错：\n已安装cuda-9.0，同时添加了环境变量:\n仍报错\n"
    assert "cuda-library-missing" in codes(paste_findings(tmp_path, text))


# --- torch's own cuDNN, and cuDNN statuses that name no single cause --------------------------------------------------

_TORCH_IMPORT_CUDNN = """Traceback (most recent call last):
  File "webui.py", line 4, in <module>
    from configs.model_config import *
  File "/home/u/miniconda3/envs/langchain/lib/python3.8/site-packages/torch/__init__.py", line 229, in <module>
    from torch._C import *  # noqa: F403
ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory
"""


def test_torch_itself_failing_to_load_its_cudnn_is_a_cudnn_problem(tmp_path):
    # chatchat-space/Langchain-Chatchat (b36-10): import torch fails on libcudnn.so.8, torch's version not stated
    assert "cudnn-mismatch" in codes(paste_findings(tmp_path, _TORCH_IMPORT_CUDNN))


def test_another_package_missing_its_cudnn_is_not_torchs(tmp_path):
    text = "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file"
    got = severities(paste_findings(tmp_path, text))
    assert got.get("cuda-library-missing") == "error" and got.get("cudnn-mismatch") != "error"


def test_cudnn_not_initialized_alone_is_a_warning(tmp_path):
    # VOICEVOX/voicevox_engine (b36-13): the status, no version anywhere; the engine's own build was at fault
    text = (
        '2023-02-03T00:55:30.909944Z  WARN onnxruntime::onnxruntime: "CUDNN failure 1: CUDNN_STATUS_NOT_INITIALIZED ; '
        'GPU=0 ; hostname=voicevox ; expr=status_; "\n'
    )
    assert severities(paste_findings(tmp_path, text)).get("cudnn-mismatch") == "warning"


def test_a_cudnn_version_pair_stays_an_error(tmp_path):
    text = "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime version (8, 3, 3)."
    assert severities(paste_findings(tmp_path, text)).get("cudnn-mismatch") == "error"


# --- the dispatcher's message cut before its backend list -------------------------------------------------------------


def test_cut_dispatcher_message_for_a_factory_op_is_a_cpu_build(tmp_path):
    # VOICEVOX (b36-12): the app's log cuts torch's message before the list of backends
    text = "Exception: Could not run 'aten::empty_strided' with arguments from the 'CUDA' backend. This could be because th...\n"
    assert "cpu-only-torch" in codes(paste_findings(tmp_path, text))


def test_dispatcher_message_listing_cuda_is_not_a_cpu_build(tmp_path):
    text = (
        "NotImplementedError: Could not run 'aten::empty_strided' with arguments from the 'CUDA' backend. This could be "
        "because the operator doesn't exist for this backend. 'aten::empty_strided' is only available for these backends: "
        "[CPU, CUDA, Meta, QuantizedCPU, BackendSelect]."
    )
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, text))


# --- "the GPU is not used", in other languages ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "WIN系统下无法调用GPU\n如图，CPU也无法调用显卡也没有多少利用率",  # SmartSub (b36-19)
        "推理的时候GPU利用率为0，只能用CPU跑",
        "GPUが使われないのですが、CPUで動いているようです",
    ],
)
def test_gpu_not_used_in_other_languages_points_at_a_cpu_build(tmp_path, text):
    assert severities(paste_findings(tmp_path, text)).get("cpu-only-torch") == "warning"


def test_the_same_words_about_ollama_are_not_torch(tmp_path):
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, "ollama 无法调用GPU，只能用CPU跑"))


# --- a +cuXXX pin searched on PyPI ------------------------------------------------------------------------------------


def test_local_pin_without_the_pytorch_index_is_named(tmp_path):
    # jianchang512/stt (b36-21): requirements.txt pinned torch==2.1.2+cu121, the mirror had no such build
    f = paste_findings(tmp_path, "ERROR: No matching distribution found for torch==2.1.2+cu121\n")
    assert severities(f).get("install-command-names-missing-wheel") == "warning"


def test_local_pin_with_the_pytorch_index_named_is_not_this_reading(tmp_path):
    text = (
        "pip install torch==2.1.2+cu121 --index-url https://download.pytorch.org/whl/cu121\n"
        "ERROR: No matching distribution found for torch==2.1.2+cu121\n"
    )
    f = paste_findings(tmp_path, text)
    assert not any("only on the PyTorch index" in x["title"] for x in f)


# --- pip's resolver conflict lines ------------------------------------------------------------------------------------

_RESOLVER = """ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.
torchaudio 2.1.0+cu118 requires torch==2.1.0, but you have torch 2.2.0+cu118 which is incompatible.
torchvision 0.16.0+cu118 requires torch==2.1.0, but you have torch 2.2.0+cu118 which is incompatible.
"""


def test_pip_resolver_conflict_reads_the_installed_pair(tmp_path):
    # 3DTopia/LGM (b36-05): xformers' install replaced torch 2.1.0 by 2.2.0, torchvision stayed 0.16.0
    got = codes(paste_findings(tmp_path, _RESOLVER))
    assert "torchvision-mismatch" in got
    assert "gpu-arch-unsupported" not in got  # "+cu118 ... incompatible" is pip's version conflict, not a GPU's


def test_pip_resolver_reader():
    from cudadoctor.readers.packages import read_pip_conflicts

    got = {d["name"]: d["version"] for d in read_pip_conflicts(_RESOLVER.splitlines())}
    assert got == {"torchaudio": "2.1.0+cu118", "torch": "2.2.0+cu118", "torchvision": "0.16.0+cu118"}


# --- CUDA on PATH said to be the cause --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # NVIDIA/tensorflow#55
        "Yes, running the above command showed that `/usr/local/cuda-11.2/lib64` was causing the conflict. Removing "
        "`/usr/local/cuda-11.2` from 'LD_LIBRARY_PATH' did solve the issue. Thank you!!",
        # ollama/ollama#5689 (title)
        "System wide old version of cuda v11 used instead of bundled version - runner fails to start due to missing symbols",
        # w-okada/voice-changer#993
        "cudaのパスが通っている場合エラーが出て、\ncudaのパスを変更すると使えるようになりました。",
    ],
)
def test_cuda_on_the_path_said_to_be_the_cause(tmp_path, text):
    assert "library-shadowing" in codes(paste_findings(tmp_path, text))


def test_adding_cuda_to_path_is_not_shadowing(tmp_path):
    text = (
        "I added C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1\\bin to PATH but torch.cuda.is_available() is False"
    )
    assert "library-shadowing" not in codes(paste_findings(tmp_path, text))


# --- the open kernel modules on a GPU older than Turing ---------------------------------------------------------------


def test_open_modules_with_a_pascal_gpu(tmp_path):
    # a Chinese blog (b36-04): the open modules built from NVIDIA's repository, an MX250, insmod finds no device
    text = (
        "PC装有NVIDIA GForce MX250显卡\n代码托管在github上,连接为:\nhttps://github.com/NVIDIA/open-gpu-kernel-modules.git\n"
        "sudo insmod nvidia.ko\n提示检测不到设备\n"
    )
    assert "open-kernel-module-unsupported" in codes(paste_findings(tmp_path, text))


def test_open_modules_with_a_turing_or_later_gpu_are_fine(tmp_path):
    text = "GPU: RTX 3060\nsudo apt install nvidia-driver-535-open\nnvidia-smi works"
    assert "open-kernel-module-unsupported" not in codes(paste_findings(tmp_path, text))


# --- torch's headers refusing an old gcc (checks/gcc16.py, kb/errors/build16.json) ------------------------------------


@pytest.mark.parametrize(
    "text, needs",
    [
        # facebookresearch/detectron2#723 (torch 1.x, c10/util/C++17.h)
        (
            "/home/u/anaconda3/envs/py36/lib/python3.6/site-packages/torch/include/c10/util/C++17.h:24:2: error: #error "
            '"You\'re trying to build PyTorch with a too old version of GCC. We need GCC 5 or later."',
            "GCC 5",
        ),
        # mmcv-full on gcc 4.8 (c10/util/TypeIndex.h)
        ('Index.h:31:2: error: #error "You\'re running a too old version of GCC. We need GCC 5 or later."', "GCC 5"),
        # LGM's diff-gaussian-rasterization on RHEL 8 (torch 2.x)
        (
            "/home/j/.conda/envs/lgm/lib/python3.8/site-packages/torch/include/c10/util/C++17.h:16:2: error: #error "
            '"You\'re trying to build PyTorch with a too old version of GCC. We need GCC 9 or later."',
            "GCC 9",
        ),
    ],
)
def test_torch_headers_refusing_an_old_gcc(tmp_path, text, needs):
    f = [x for x in paste_findings(tmp_path, text) if x["code"] == "host-gcc-too-old-for-torch-headers"]
    assert f and f[0]["severity"] == "error" and f[0]["evidence"]["needs"] == needs


def test_the_gcc_suggested_is_one_nvcc_accepts(tmp_path):
    text = (
        "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.1, V12.1.105\n"
        'C++17.h:16:2: error: #error "You\'re trying to build PyTorch with a too old version of GCC. We need GCC 9 or later."\n'
    )
    f = [x for x in paste_findings(tmp_path, text) if x["code"] == "host-gcc-too-old-for-torch-headers"]
    assert f and "gcc 12 at most" in f[0]["evidence"]["nvcc accepts"]
    assert any("CC=gcc-12" in c for c in f[0]["fix"]["commands"])


def test_nvcc_refusing_a_new_gcc_is_not_this(tmp_path):
    text = "#error -- unsupported GNU version! gcc versions later than 11 are not supported!"
    assert "host-gcc-too-old-for-torch-headers" not in codes(paste_findings(tmp_path, text))
