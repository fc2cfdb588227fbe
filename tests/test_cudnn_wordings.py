"""cuDNN's version check in the frameworks' own words, in every release's form (kb/errors/missing-libraries.json)."""

import pytest

from cudadoctor.errortext import code_matches
from cudadoctor import registry

REG = registry.load(plugins=False)

# Verbatim from public notes (TensorFlow 1.x, 2017 and 2018) and a JAX issue (jax-ml/jax#15268's form).
WORDINGS = [
    "Loaded runtime CuDNN library: 6021 (compatibility version 6000) but source was compiled with 5105 "
    "(compatibility version 5100).  If using a binary install, upgrade your CuDNN library to match.",
    "Loaded runtime CuDNN library: 7003 (compatibility version 7000) but source was compiled with 6021 "
    "(compatibility version 6000).  If using a binary install, upgrade your CuDNN library to match.",
    "E0508 03:34:06.237713 14701 cuda_dnn.cc:522] Loaded runtime CuDNN library: 9.0.0 but source was compiled "
    "with: 9.1.1. CuDNN library needs to have matching major version and equal or higher minor version.",
]


@pytest.mark.parametrize("text", WORDINGS)
def test_every_form_of_the_frameworks_cudnn_check_is_cudnn_mismatch(text):
    assert code_matches(REG.code("cudnn-mismatch"), text)


def test_a_cudnn_version_said_in_passing_is_not_the_check():
    assert not code_matches(REG.code("cudnn-mismatch"), "Loaded runtime libraries fine; source was compiled with gcc 9")
