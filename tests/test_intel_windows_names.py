"""Windows names Intel's GPUs 'Intel(R) <brand>(R|TM) [model] Graphics' (Device Manager, dxdiag, Task Manager): the form
is read whatever the brand word, so the only GPU of a laptop is known to be Intel's; beside an NVIDIA GPU (Optimus) it
is not the only one. The Graphics table lines are a real Windows report's (a public machine-report's "Graphics" table:
NVIDIA GeForce GTX 1050 + Intel(R) UHD Graphics 620); torch's message is its own (torch/cuda/__init__.py). The pairing
of the two is composed here.
"""

from checkcli import codes, paste_findings

TORCH = (
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
    "driver from http://www.nvidia.com/Download/index.aspx\n"
)
INTEL_ONLY = "| Device | Driver | Adapter RAM | Status |\n| --- | --- | ---: | --- |\n| Intel(R) UHD Graphics 620 | 26.20.100.6913 | 1.00 GiB | OK |\n"
BOTH = (
    "| Device | Driver | Adapter RAM | Status |\n| --- | --- | ---: | --- |\n"
    "| NVIDIA GeForce GTX 1050 | 32.0.15.7688 | 4.00 GiB | OK |\n"
    "| Intel(R) UHD Graphics 620 | 26.20.100.6913 | 1.00 GiB | OK |\n"
)


def test_an_intel_windows_device_name_as_the_only_gpu_is_non_nvidia(tmp_path):
    assert "non-nvidia-gpu" in codes(paste_findings(tmp_path, TORCH + "\n" + INTEL_ONLY))


def test_any_brand_word_in_the_form(tmp_path):
    for name in ("Intel(R) Iris(R) Xe Graphics", "Intel(R) Arc(TM) A770 Graphics"):
        assert "non-nvidia-gpu" in codes(paste_findings(tmp_path, TORCH + f"\nMy laptop has {name}\n")), name


def test_beside_an_nvidia_gpu_it_is_not_the_only_one(tmp_path):
    assert "non-nvidia-gpu" not in codes(paste_findings(tmp_path, TORCH + "\n" + BOTH))


def test_an_intel_cpu_name_is_not_a_gpu(tmp_path):
    text = TORCH + "\nProcessor: Intel(R) Core(TM) i7-10750H CPU @ 2.60GHz\n"
    assert "non-nvidia-gpu" not in codes(paste_findings(tmp_path, text))
