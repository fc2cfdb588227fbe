"""gpuid9: a hosted notebook without a GPU attached (Colab's default CPU runtime, Kaggle's accelerator None, SageMaker's
ml.t*/m*/c* instances): where nothing else found a cause, a warning in no-nvidia-driver's class (no GPU, no driver).

Real texts from public threads (none from the blind batches), each with its URL.
"""

from __future__ import annotations

from checkcli import codes, paste_findings, severities


def test_colab_torch_false_is_a_cpu_runtime(tmp_path):
    # https://github.com/googlecolab/colabtools/issues/930 (the Colab team: switch to a GPU runtime)
    text = (
        "Colab GPU unavailable for torch 1.3.1 or tensorflow 1.15.0\n"
        "The default tensorflow and torch on Colab do not appear to be able to use GPU with GPU as runtime:\n"
        "import torch\nprint(torch.__version__)\ntorch.cuda.is_available()\n\nreturns:\n\n1.3.1\nFalse"
    )
    got = severities(paste_findings(tmp_path, text))
    assert got.get("no-nvidia-driver") == "warning", got


def test_colab_with_the_gpu_shown_is_not_a_cpu_runtime(tmp_path):
    # https://github.com/CorentinJ/Real-Time-Voice-Cloning/issues/622: nvidia-smi shows the driver in that Colab VM
    text = (
        "【COLAB】RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.\n"
        "!nvidia-smi\n| NVIDIA-SMI 460.27.04    Driver Version: 418.67       CUDA Version: 10.1     |"
    )
    got = paste_findings(tmp_path, text)
    assert not any("hosted runtime" in f["title"] for f in got), codes(got)


def test_colab_old_driver_keeps_its_own_cause(tmp_path):
    # https://github.com/googlecolab/colabtools/issues/1773: another cause is shown, so the fallback stays silent
    text = (
        "torch.cuda.is_available () returning false in google coolab\n"
        "/usr/local/lib/python3.6/dist-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: The NVIDIA "
        "driver on your system is too old (found version 10010). Please update your GPU driver by downloading and "
        "installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\nFalse"
    )
    got = paste_findings(tmp_path, text)
    assert "driver-too-old" in codes(got)
    assert not any("hosted runtime" in f["title"] for f in got)
