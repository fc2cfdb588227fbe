"""gpu-arch-unsupported's guesses (a GPU only the newest or no torch builds run, the torch not stated) step back when the
text shows a kernel ran on that GPU and faulted: a misaligned or illegal address needs code for the architecture."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings

# kryptex/krig-miner#5 (an RTX 5090; the fault was the program's, fixed in its next release)
RTX5090 = "RTX 5090, sm_120, driver 610.74 (CUDA 13.3)\n"


@pytest.mark.parametrize(
    "fault",
    [
        "CUDA_ERROR_MISALIGNED_ADDRESS (716) at first sync batch",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "RuntimeError: CUDA error: device-side assert triggered",
    ],
)
def test_a_kernel_fault_is_no_architecture_guess(tmp_path, fault):
    assert "gpu-arch-unsupported" not in codes(paste_findings(tmp_path, RTX5090 + fault))


def test_without_a_fault_the_guess_stays(tmp_path):
    assert "gpu-arch-unsupported" in codes(paste_findings(tmp_path, RTX5090 + "It does not work on my new GPU"))


def test_model_number_before_the_family_word_names_the_gpu(tmp_path):
    # RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2565's wording: "5090 rtx"
    assert "gpu-arch-unsupported" in codes(paste_findings(tmp_path, "RVC1006Nvidia が 5090 rtx で動作しないのはなぜですか?"))
    assert "gpu-arch-unsupported" not in codes(paste_findings(tmp_path, "in 2024 rtx prices rose"))
