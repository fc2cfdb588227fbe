"""The verbatim paste gives the facts a build tool's own mismatch sentence states (task paste4).

Real texts, each with its thread; the sentences come from different tools (torch.utils.cpp_extension, apex's
setup.py, DeepSpeed's op builder, a Chinese translation of torch's), so the reading is of the class, not one wording.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cudadoctor.cli import cli
from cudadoctor.readers import prose


def _check(tmp_path, text: str) -> dict:
    p = tmp_path / "paste.txt"
    p.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--from-text", str(p), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


MISMATCH = [
    # https://github.com/JIA-Lab-research/MGM/issues/91 (DeepSpeed's op builder)
    (
        "Which deepspeed version is it\n"
        "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version 12.2 does "
        "not match the version torch was compiled with 11.7, unable to compile cuda/cpp extensions without a matching cuda "
        "version.\n\nhow should i fix it\n",
        "12.2",
        "11.7",
    ),
    # https://github.com/continue-revolution/sd-webui-segment-anything/issues/27 (torch's sentence, translated)
    (
        "> > 检测到的 CUDA 版本 (12.1) 与用于编译 PyTorch (11.8) 的版本不匹配。请确保使用相同的 CUDA 版本。\n> \n"
        "> 从 nvidia 下载 cuda 11.8 应该有帮助\n\n我已经解决了 单独下载源码编译 cuda11.8 能运行\n",
        "12.1",
        "11.8",
    ),
    # https://github.com/NVIDIA/apex/issues/1133 (apex's setup.py; the installed toolkit from nvcc's own banner)
    (
        "An install problem.Cuda11.2 torch1.9.0\n```\n\n    torch.__version__  = 1.9.0+cu102\n\n\n"
        "    Compiling cuda extensions with\n    nvcc: NVIDIA (R) Cuda compiler driver\n"
        "    Copyright (c) 2005-2021 NVIDIA Corporation\n    Built on Sun_Feb_14_21:12:58_PST_2021\n"
        "    Cuda compilation tools, release 11.2, V11.2.152\n    Build cuda_11.2.r11.2/compiler.29618528_0\n"
        "    from /usr/local/cuda/bin\n\n    Traceback (most recent call last):\n"
        '      File "/tmp/pip-req-build-xogkfxc5/setup.py", line 171, in <module>\n'
        "        check_cuda_torch_binary_vs_bare_metal(torch.utils.cpp_extension.CUDA_HOME)\n"
        "    RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used "
        "to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 10.2.\n",
        "11.2",
        "10.2",
    ),
]


@pytest.mark.parametrize("text,nvcc,torch_cuda", MISMATCH)
def test_a_build_mismatch_sentence_gives_both_cudas_and_the_mismatch(tmp_path, text, nvcc, torch_cuda):
    out = _check(tmp_path, text)
    assert out["facts"]["toolkit"]["nvcc_version"] == nvcc
    assert out["facts"]["torch"]["cuda"] == torch_cuda
    assert "cuda-toolkit-mismatch" in [f["code"] for f in out["findings"] if f["severity"] in ("error", "warning")]


def test_torchs_own_sentence_wrapped_before_the_torch_version():
    # https://github.com/IDEA-Research/detrex/issues/246 (holdout h168: "... used to compile" / "PyTorch (10.2)." on two lines)
    got = prose.read(
        [
            "RuntimeError:",
            "The detected CUDA version (11.3) mismatches the version that was used to compile",
            "PyTorch (10.2). Please make sure to use the same CUDA versions.",
        ]
    )
    assert got["nvcc"]["value"] == "11.3" and got["torch_cuda"]["value"] == "10.2"


def test_what_a_package_was_built_for_is_not_read_as_torchs_cuda():
    # https://github.com/facebookresearch/xformers/issues/800: xFormers names the torch and CUDA *it* was built for.
    got = prose.read(
        [
            "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
            "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cu118)",
            "    Python  3.8.18 (you have 3.8.5)",
        ]
    )
    assert "torch_cuda" not in got and "nvcc" not in got
    assert got["torch"]["value"] == "2.1.0+cu118"


# --- environment variables the paste assigns -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "line,name,value",
    [
        # https://github.com/ziplab/PTQD/issues/13 (Python)
        ("os.environ['CUDA_VISIBLE_DEVICES'] = '7'", "CUDA_VISIBLE_DEVICES", "7"),
        # https://github.com/pytorch/pytorch/issues/1504 (prose, a shell value with commas and brackets)
        (
            "Pytorch is giving CUDNN_STATUS_INTERNAL_ERROR when I try to run my program with gpu_id 0 and "
            "CUDA_VISIBLE_DEVICES=[1,2,3]. I was running it this way because GPU 0 was fully occupied.",
            "CUDA_VISIBLE_DEVICES",
            "[1,2,3]",
        ),
        # https://github.com/vllm-project/vllm/issues/7890 (an env listing: set and empty)
        ("CUDA_VISIBLE_DEVICES=", "CUDA_VISIBLE_DEVICES", ""),
        # https://github.com/open-mmlab/mmdetection/issues/944 (Markdown bold around an export)
        ("**export CUDA_HOME=/usr/local/cuda-10.0:$CUDA_HOME**", "CUDA_HOME", "/usr/local/cuda-10.0:$CUDA_HOME"),
    ],
)
def test_an_assignment_gives_the_variable(line, name, value):
    assert prose.env_assignments([line])[name]["value"] == value


@pytest.mark.parametrize(
    "line",
    [
        # a placeholder in an error's advice (PaddlePaddle's "set LD_LIBRARY_PATH by `export LD_LIBRARY_PATH=...`")
        "  - Linux: set LD_LIBRARY_PATH by `export LD_LIBRARY_PATH=...`",
        # a command substitution: the value is the command's output, which the text does not show
        "export LD_LIBRARY_PATH=$(find $CONDA_PREFIX/lib/python3.11/site-packages/nvidia -type d -name lib | tr '\\n' ':')",
        # a printout that shows nothing (the variable may be unset)
        "os.environ['CUDA_VISIBLE_DEVICES']: ",
    ],
)
def test_what_is_not_a_value_is_not_read(line):
    assert prose.env_assignments([line]) == {}


def test_two_values_of_one_variable_are_left_unset():
    assert prose.env_assignments(["export CUDA_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES=1 python train.py"]) == {}


def test_a_malformed_visible_devices_in_a_paste_without_the_driver_hides_every_gpu(tmp_path):
    # https://github.com/pytorch/pytorch/issues/1504: no driver or nvidia-smi in the text; the value alone hides the GPUs.
    out = _check(
        tmp_path,
        "RuntimeError: CUDNN_STATUS_INTERNAL_ERROR\n"
        "Pytorch is giving CUDNN_STATUS_INTERNAL_ERROR when I try to run my program with gpu_id 0 and "
        "CUDA_VISIBLE_DEVICES=[1,2,3]. I was running it this way because GPU 0 was fully occupied.\n",
    )
    assert out["facts"]["environment"]["vars"] == {"CUDA_VISIBLE_DEVICES": "[1,2,3]"}
    assert out["facts"]["environment"]["vars_partial"] is True
    f = {x["code"]: x for x in out["findings"]}["no-gpu-visible"]
    assert "'[1' is neither an index nor a GPU UUID" in f["title"]


def test_an_index_without_the_gpu_count_is_not_called_hiding(tmp_path):
    # https://github.com/ziplab/PTQD/issues/13 without its error line: "7" hides GPUs only on a machine with 7 or fewer.
    out = _check(tmp_path, "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '7'\n")
    assert not [x for x in out["findings"] if x["code"] == "no-gpu-visible" and x["severity"] == "error"]


# --- a pasted environment.yml ----------------------------------------------------------------------------------------

# https://github.com/CompVis/stable-diffusion/blob/main/environment.yaml (as pasted in a note, with its heading)
LDM_ENV = """###environment.yaml

name: ldm
channels:
  - pytorch
  - defaults
dependencies:
  - python=3.8.5
  - pip=20.3
  - cudatoolkit=11.3
  - pytorch=1.11.0
  - torchvision=0.12.0
  - numpy=1.19.2
  - pip:
    - albumentations==0.4.3
    - diffusers
    - opencv-python==4.1.2.30
    - test-tube>=0.7.5
    - transformers==4.19.2
"""


def test_an_environment_yml_gives_its_pinned_packages(tmp_path):
    out = _check(tmp_path, LDM_ENV)
    got = {d["name"]: d for d in out["facts"]["packages"]["distributions"]}
    assert got["torch"]["version"] == "1.11.0" and got["torch"]["installer"] == "conda"
    assert got["cudatoolkit"]["version"] == "11.3"
    assert got["transformers"]["installer"] == "pip" and got["opencv-python"]["version"] == "4.1.2.30"
    assert "diffusers" not in got and "test-tube" not in got  # no pin: the version installed is not stated
    assert not out["facts"]["packages"].get("complete")  # pinned requests, not a listing of what is installed
    assert "environment-yml" in [p["kind"] for p in out["facts"]["pasted"]["parts"]]
