"""Issue 21, reader round 9: the facts a person reads in a paste, read by `check --from-text` by their FORM.

Texts are real, from public threads (URL beside each; none from the blind batches). Each form is tested on at least
two independent wordings where the class has them, and on a text where it must NOT read a value.
"""

from __future__ import annotations

from cudadoctor.readers import issue, prose


def _facts(text: str) -> dict:
    return issue.read(text)["facts"]


def _got(text: str) -> dict:
    return prose.read(text.splitlines())


# --- torchvision's own check of torch's CUDA (torchvision/extension.py): torch.version.cuda ---------------------------

# https://github.com/geocine/sd-easy-mode/issues/18 (wrapped as the reporter pasted it)
SD_EASY_18 = """RuntimeError: Detected that PyTorch and torchvision were compiled with different
CUDA versions. PyTorch has CUDA Version=11.7 and torchvision has CUDA
Version=11.8. Please reinstall the torchvision that matches your PyTorch
install."""
# https://github.com/deforum/deforum-stable-diffusion/issues/348
DEFORUM_348 = (
    "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch has "
    "CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your PyTorch "
    "install."
)
# https://github.com/21Vipin/Medical-Image-Classification-using-deep-learning/issues/3
MEDICAL_3 = (
    "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA "
    "Version=9.0 and torchvision has CUDA Version=10.0. Please reinstall the torchvision that matches your PyTorch install."
)


def test_torchvision_check_names_torchs_cuda_not_torchvisions():
    assert _facts(SD_EASY_18)["torch"]["cuda"] == "11.7"
    assert _facts(DEFORUM_348)["torch"]["cuda"] == "12.1"
    assert _facts(MEDICAL_3)["torch"]["cuda"] == "9.0"


# --- the interpreter from its package paths -------------------------------------------------------------------------

# https://github.com/wibus-wee/stable-diffusion-webui-ipynb/issues/17 (frames of a Colab traceback)
WEBUI_IPYNB_17 = """Traceback (most recent call last):
  File "/content/stable-diffusion-webui/launch.py", line 365, in <module>
    start()
  File "/content/stable-diffusion-webui/modules/interrogate.py", line 11, in <module>
    from torchvision import transforms
  File "/usr/local/lib/python3.9/dist-packages/torchvision/__init__.py", line 6, in <module>
    from torchvision import datasets, io, models, ops, transforms, utils
"""
# https://github.com/mathmanu/edgeai-torchvision/issues/18
EDGEAI_18 = (
    "/miniconda3/envs/edgeaitv/lib/python3.8/site-packages/torch/utils/cpp_extension.py:782: UserWarning: The detected "
    "CUDA version (11.7) has a minor version mismatch with the version that was used to compile PyTorch (11.3). Most "
    "likely this shouldn't be a problem."
)


def test_python_version_and_linux_from_package_paths():
    f = _facts(WEBUI_IPYNB_17)
    assert f["python"]["version"] == "3.9"
    assert f["system"]["os"] == "Linux"
    f = _facts(EDGEAI_18)
    assert f["python"]["version"] == "3.8"
    assert not (f.get("system") or {}).get("os")  # a conda path under / is no Linux-only sign (a Mac has them too)
    assert f["torch"]["cuda"] == "11.3" and f["toolkit"]["nvcc_version"] == "11.7"


def test_two_interpreters_in_paths_say_nothing():
    text = WEBUI_IPYNB_17 + '  File "/usr/lib/python3.8/site-packages/x.py", line 1, in <module>\n'
    assert not (_facts(text).get("python") or {}).get("version")


# --- issue-form headings: the value on the next line -----------------------------------------------------------------

# https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/11605 (the form's headings and answers)
A1111_11605 = """### What Python version are you running on ?

None

### What platforms do you use to access the UI ?

Windows

### What device are you running WebUI on?

Nvidia GPUs (RTX 20 above)
"""


def test_issue_form_heading_gives_its_value_and_none_is_no_value():
    f = _facts(A1111_11605)
    assert f["system"]["os"] == "Windows"
    assert not (f.get("python") or {}).get("version")  # "None" is the form's answer, no version


# https://github.com/oobabooga/textgen/issues/7493 (the form's "System Info" answered in a fenced block)
TEXTGEN_7493 = """### System Info

```shell
Windows 11
NVIDIA RTX 5080
```
"""
# https://github.com/turboderp-org/exllamav2/issues/319 (pip show: the installed torch, and the interpreter's site dir)
EXLLAMA_319 = """(base) hemang@hemang-levono-15arr:~/Documents/GitHub/exllamav2$ python3.11 -m pip show torch
Name: torch
Version: 2.0.1
Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration
Home-page: https://pytorch.org/
Author: PyTorch Team
Author-email: packages@pytorch.org
License: BSD-3
Location: /home/hemang/.local/lib/python3.11/site-packages
Requires: filelock, jinja2, networkx, nvidia-cublas-cu11, sympy, triton, typing-extensions
"""


def test_heading_answered_in_a_fenced_block():
    f = _facts(TEXTGEN_7493)
    assert f["system"]["os"] == "Windows"
    assert f["nvml"]["devices"][0]["compute_capability"] == "12.0"


def test_torch_from_a_package_listing():
    f = _facts(EXLLAMA_319)
    assert f["torch"]["version"] == "2.0.1"
    assert f["python"]["version"] == "3.11"


# --- install commands are what was asked for; only their clause ------------------------------------------------------

# https://github.com/pytorch/pytorch/issues/100690 (a Windows pip session)
PT_100690 = r"""PS C:\> ~\AppData\Local\Microsoft\WindowsApps\python3.10.exe -m venv .\test-venv
(test-venv) PS C:\> pip install torch
Collecting torch
  Using cached torch-2.0.0-cp310-cp310-win_amd64.whl (172.3 MB)
"""
# https://github.com/pytorch/pytorch/issues/85332
PT_85332 = """nvidia-smi:NVIDIA-SMI 450.51.05    Driver Version: 450.51.05    CUDA Version: 11.0
nvcc -V:Cuda compilation tools, release 10.2, V10.2.89
install : pip install torch==1.8.1+cu102 torchvision==0.9.1+cu102 torchaudio==0.8.1 -f https://download.pytorch.org/whl/torch_stable.html

print(torch.__version__)
1.8.1+cu102
"""


def test_install_lines_give_no_torch_but_the_printout_does():
    f = _facts(PT_100690)
    assert not (f.get("torch") or {}).get("version")
    assert f["system"]["os"] == "Windows"
    f = _facts(PT_85332)
    assert f["torch"]["version"] == "1.8.1+cu102"
    assert f["nvml"]["driver_version"].startswith("450.51")


# https://github.com/pytorch/pytorch/issues/16936: the reporter's versions in one sentence, no install in it
PT_16936 = "My latest installation is pytorc 1.0, nvidia-410, cuda 10.0 but I have tried many combinations."
# https://github.com/lipzh5/ResearchProgress/issues/19 (the toolkit's runfile, run, and its summary)
RUNFILE_19 = """peizhen@omniai:~/Downloads$ sh cuda_12.1.0_530.30.02_linux.run --toolkitpath=/etc/disks/path/to/peizhen/cuda-12.1
Driver:   Not Selected
Toolkit:  Installed in /etc/disks/omniai/data/peizhen/cuda-12.1/
***WARNING: Incomplete installation! This installation did not install the CUDA Driver. A driver of version at least 530.00 is required for CUDA 12.1 functionality to work."""
# https://github.com/pytorch/pytorch/issues/37212
PT_37212 = """Win10，RTX2080，CUDA10.2，CUDNN7.65 ，anaconda
but torch.cuda.is_available() always return false,why?"""


def test_versions_beside_an_install_are_read_in_their_own_clause():
    got = _got(PT_16936)
    assert got["driver"]["value"] == "410"
    assert got["cuda"]["value"] == "10.0"
    f = _facts(RUNFILE_19)
    assert f["toolkit"]["nvcc_version"] == "12.1"  # the toolkit's own runfile, run, and its directory
    assert not (f.get("nvml") or {}).get("driver_version")  # "a driver of version at least 530.00 is required"
    f = _facts(PT_37212)
    assert f["torch"]["cuda_available"] is False  # "always return false"
    assert f["system"]["os"] == "Windows"


# --- torch's local version tag names the build -----------------------------------------------------------------------

# https://github.com/unslothai/unsloth-zoo/pull/79 (unsloth's banner: the sentence's full stop right after the tag)
UNSLOTH_ZOO_79 = """==((====))==  Unsloth 2025.3.14: Fast Llama patching. Transformers: 4.49.0. vLLM: 0.7.3.
   \\\\   /|    NVIDIA GeForce RTX 4090. Num GPUs = 1. Max memory: 23.621 GB. Platform: Linux.
O^O/ \\_/ \\    Torch: 2.5.1+cu124. CUDA: 8.9. CUDA Toolkit: 12.4. Triton: 3.1.0"""
# https://github.com/unslothai/unsloth/issues/813 (the older banner)
UNSLOTH_813 = """   \\\\   /|    GPU: Tesla P40. Max memory: 23.879 GB. Platform = Linux.
O^O/ \\_/ \\    Pytorch: 2.3.0+cu121. CUDA = 6.1. CUDA Toolkit = 12.1."""


def test_a_local_tag_does_not_take_the_full_stop_and_names_torchs_cuda():
    f = _facts(UNSLOTH_ZOO_79)
    assert f["torch"]["version"] == "2.5.1+cu124"
    assert f["torch"]["cuda"] == "12.4"
    f = _facts(UNSLOTH_813)
    assert f["torch"]["version"] == "2.3.0+cu121"
    assert f["torch"]["cuda"] == "12.1"


def test_another_packages_tag_is_not_torchs():
    # https://github.com/Thinklab-SJTU/Bench2DriveZoo/issues/13
    assert "torch" not in _got("torchaudio 2.0.2+cu118")
    assert "torch" not in _got("torchvision 0.15.2+cu118")


# --- is_available() as scripts print it ------------------------------------------------------------------------------

# https://github.com/open-mmlab/mmdetection/issues/4736 (mmcv's collect_env printout)
MMDET_4736 = """sys.platform: linux
Python: 3.8.8 (default, Feb 24 2021, 21:46:12) [GCC 7.3.0]
CUDA available: True
GPU 0: GeForce RTX 3090
CUDA_HOME: /usr/local/cuda
NVCC: Cuda compilation tools, release 10.0, V10.0.130
PyTorch: 1.7.1"""
# https://github.com/3dem/model-angelo/issues/60 (a REPL)
ANGELO_60 = """>>> import torch
>>> print(torch.cuda.is_available())
False"""


def test_cuda_available_printouts():
    got = _got(MMDET_4736)
    assert got["cuda_available"]["value"] == "true"
    assert got["python"]["value"] == "3.8.8"
    assert _got(ANGELO_60)["cuda_available"]["value"] == "false"


# --- the toolkit from nvcc's build tag, its directory; not from one wanted ------------------------------------------

# https://github.com/pytorch/pytorch/issues/51840 and https://github.com/k2-fsa/k2/pull/584 (nvcc --version, CUDA 11.0)
NVCC_51840 = "Cuda compilation tools, release 11.0, V11.0.221\nBuild cuda_11.0_bu.TC445_37.28845127_0"
NVCC_K2_584 = "Build cuda_11.0_bu.TC445_37.28540450_0"
# https://github.com/TencentARC/BrushEdit/issues/17 and https://github.com/davisking/dlib/issues/1560
BRUSHEDIT_17 = (
    r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.8\include\crt/host_config.h(153): fatal error C1189: "
    "#error:  -- unsupported Microsoft Visual Studio version!"
)
DLIB_1560 = (
    r"c:\program files\nvidia gpu computing toolkit\cuda\v9.0\include\crt/host_config.h(133): fatal error C1189: "
    "#error: -- unsupported Microsoft Visual Studio version!"
)
# https://github.com/tensorflow/nmt/issues/212 and https://github.com/deepfakes/faceswap-playground/issues/136
TF_NMT_212 = (
    "ImportError: Could not find 'cudart64_80.dll'. TensorFlow requires that this DLL be installed in a directory that "
    "is named in your %PATH% environment variable. Download and install CUDA 8.0 from this URL: "
    "https://developer.nvidia.com/cuda-toolkit"
)
FACESWAP_136 = (
    "ImportError: Could not find 'cudart64_90.dll'. TensorFlow requires that this DLL be installed in a directory that "
    "is named in your %PATH% environment variable. Download and install CUDA 9.0 from this URL: "
    "https://developer.nvidia.com/cuda-toolkit"
)
# https://github.com/pytorch/pytorch/issues/6098 and https://github.com/tensorflow/tensorflow/issues/32326 (templates)
PT_6098 = "- OS: Windows\n- PyTorch version: 0.4\n- Python version: 3.6\n- CUDA/cuDNN version: 9.1/7.1"
TF_32326 = (
    "- Python version: 3.7\n- CUDA/cuDNN version:cuda 8.0\n- GPU model and memory:quadro 4000\n"
    "ImportError: Could not find 'cudart64_100.dll'. TensorFlow requires that this DLL be installed in a directory that "
    "is named in your %PATH% environment variable. Download and install CUDA 10.0 from this URL: "
    "https://developer.nvidia.com/cuda-90-download-archive"
)


# https://github.com/lipzh5/ResearchProgress/issues/13 (nvcc -V of 11.7: the build tag's later form)
NVCC_LIPZH5_13 = """export PATH="/usr/local/cuda-11.7/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda-11.7/lib64:$LD_LIBRARY_PATH"
nvcc: NVIDIA (R) Cuda compiler driver
Build cuda_11.7.r11.7/compiler.31442593_0"""


def test_toolkit_from_nvcc_build_tag():
    assert _got(NVCC_51840)["nvcc"]["value"] == "11.0"
    assert _got(NVCC_K2_584)["nvcc"]["value"] == "11.0"
    assert _got(NVCC_LIPZH5_13)["nvcc"]["value"] == "11.7"


# https://github.com/pop-os/nvidia-graphics-drivers-470/pull/17 (apt policy: the installed driver package)
POP_17 = """system76@pop-os:~$ apt policy nvidia-driver-470
nvidia-driver-470:
  Installed: 470.199.02-1pop0~1695832709~22.04~27efad5
  Candidate: 470.199.02-1pop0~1695832709~22.04~27efad5
  Version table:
 *** 470.199.02-1pop0~1695832709~22.04~27efad5 1002
        100 /var/lib/dpkg/status"""


def test_driver_from_apt_policy_and_none_installed_is_no_driver():
    assert _got(POP_17)["driver"]["value"] == "470.199.02"
    # apt's own "(none)": the package named is not installed, so its number is no driver
    assert "driver" not in _got(POP_17.replace("Installed: 470.199.02-1pop0~1695832709~22.04~27efad5", "Installed: (none)"))


def test_toolkit_from_its_install_directory():
    assert _got(BRUSHEDIT_17)["cuda"]["value"] == "11.8"
    assert _got(DLIB_1560)["cuda"]["value"] == "9.0"
    assert "cuda" not in _got(BRUSHEDIT_17 + "\n" + DLIB_1560)  # two toolkits named: which one built is not said


def test_a_cuda_someone_asks_to_install_is_not_the_toolkit():
    assert "cuda" not in _got(TF_NMT_212)
    assert "cuda" not in _got(FACESWAP_136)
    assert _got(TF_32326)["cuda"]["value"] == "8.0"  # the template's answer, not the message's "install CUDA 10.0"


def test_cuda_cudnn_template_pair_reads_cuda_first():
    got = _got(PT_6098)
    assert got["cuda"]["value"] == "9.1"
    assert got["torch"]["value"] == "0.4"


# --- the OS: what only it shows ---------------------------------------------------------------------------------------

# https://github.com/tensorflow/tensorflow/issues/3069 (a loader error and an ls of the toolkit's libraries)
TF_3069 = "ImportError: libcudart.so.7.5: cannot open shared object file: No such file or directory."


def test_os_from_a_shared_library_and_from_a_windows_frame():
    assert _got(TF_3069)["os"]["value"] == "Linux"
    # https://github.com/cupy/cupy/issues/8578 (a pytest trace of a Windows interpreter)
    frame = r"C:\Miniconda\envs\runtime\lib\site-packages\cupyx\scipy\ndimage\_morphology.py:308: in binary_erosion"
    assert _got(frame)["os"]["value"] == "Windows"
    # a Linux sign and a Windows sign together say nothing
    assert "os" not in _got(TF_3069 + "\n" + frame)


# --- a GPU by its model number: the vendor's name or a tier suffix beside it -----------------------------------------


def _gpu(text: str):
    got = _got(text).get("gpus") or []
    return [(g["name"], g["compute_capability"]) for g in got]


def test_model_number_with_tier_suffix_or_vendor_name():
    # https://github.com/trexminer/T-Rex/issues/766 (title), https://github.com/gangweix/ACVNet/issues/20,
    # https://github.com/chenyuntc/scene-baseline/issues/4, https://github.com/edwardzhou130/PolarSeg/issues/45,
    # https://github.com/Storife/RANet/issues/4
    assert _gpu("Gigabyte 3070ti out of memory problem") == [("3070 ti", "8.6")]
    assert _gpu("My 1080TI has 12GB memory but throw out CUDA out of memory") == [("1080 TI", "6.1")]
    assert _gpu("nvidia 1080ti 11g显存  这都不够用？") == [("nvidia 1080 ti", "6.1")]
    assert _gpu("请问为什么我在显存11G的2080TI上以batch=2进行训练会出现CUDA out-of-memory的情况呢？") == [("2080 TI", "7.5")]
    assert _gpu("You can try pytorch 1.0 and cuda10 on 2080TI.") == [("2080 TI", "7.5")]
    # a bare number without a suffix, a vendor name or a GPU label is no card
    assert _gpu("Tried to allocate 2048 MiB in 1080 steps") == []


# https://github.com/pytorch/pytorch/issues/72957 (conda list: the build string names torch's CUDA)
PT_72957 = """[conda] cudatoolkit               10.2.89              hfd86e86_1
[conda] pytorch                   1.10.2          py3.7_cuda10.2_cudnn7.6.5_0    pytorch
[conda] pytorch-mutex             1.0                        cuda    pytorch
[conda] torchaudio                0.10.2               py37_cu102    pytorch
[conda] torchvision               0.11.3               py37_cu102    pytorch"""


def test_torch_and_its_cuda_from_a_conda_listing():
    body = "\n".join(line.replace("[conda] ", "") for line in PT_72957.splitlines())
    f = _facts("# Name                    Version                   Build  Channel\n" + body)
    assert f["torch"]["version"] == "1.10.2"
    assert f["torch"]["cuda"] == "10.2"
