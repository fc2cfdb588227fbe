"""python-unsupported from pip's own words (checks/torch_package.py, called by platform.py's check) and from a
32-bit OS: pip's candidate list is the list of torch releases with a wheel for the interpreter, so a pinned
release below (above) every listed one means the Python is too new (too old) for it; a lower bound no
candidate met means no release fits at all. Real texts (error_corpus/*.jsonl, their threads)."""

from __future__ import annotations

from cudadoctor import registry
from cudadoctor.checks.torch_package import _pip_reason
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)

# https://github.com/facebookresearch/ImageBind/issues/139 (Python 3.12: torch 1.13.1 has no cp312 wheel)
IMAGEBIND = (
    "ERROR: Could not find a version that satisfies the requirement torch==1.13.1 (from versions: 2.2.0, 2.2.1, "
    "2.2.2, 2.3.0, 2.3.1, 2.4.0, 2.4.1, 2.5.0, 2.5.1, 2.6.0, 2.7.0, 2.7.1)\n"
    "ERROR: No matching distribution found for torch==1.13.1"
)
# https://github.com/chenfei-wu/TaskMatrix/issues/431 (Windows, Python 3.11: only torch 2.0.x)
TASKMATRIX = (
    "ERROR: Could not find a version that satisfies the requirement torch==1.13.1 (from versions: 2.0.0, 2.0.1)\n"
    "ERROR: No matching distribution found for torch==1.13.1"
)
# https://github.com/zeyad-mansour/lunar/issues/95 (a Python newer than torch 1.10's wheels)
LUNAR = (
    "ERROR: Could not find a version that satisfies the requirement torch==1.10.0+cu113 (from versions: none)\n"
    "ERROR: No matching distribution found for torch==1.10.0+cu113"
)


def _got(text: str, **system):
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": text}
    if system:
        facts["system"] = dict(system)
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


def test_a_pin_below_every_listed_release_means_the_python_is_too_new():
    for text, first in ((IMAGEBIND, "2.2.0"), (TASKMATRIX, "2.0.0")):
        line, why = _pip_reason(text)
        assert "torch==1.13.1" in line
        assert f"start at {first}" in why and "newer" in why and "Python 3.1" in why
        got = _got(text)
        assert "python-unsupported" in got
        assert "1.13.1" in got["python-unsupported"].title


def test_the_listed_first_release_names_the_python_it_was_first_built_for():
    got = _got(IMAGEBIND)
    assert "3.12" in str(got["python-unsupported"].evidence.get("python_inferred"))


def test_a_pin_the_list_holds_is_not_the_interpreter():
    # the same list with the pin inside it: a local tag or an index problem, not the Python
    text = IMAGEBIND.replace("torch==1.13.1", "torch==2.4.1+cu999")
    assert _pip_reason(text) is None


def test_from_versions_none_and_a_lower_bound_say_no_release_fits():
    assert _pip_reason(LUNAR) is not None
    assert "although" not in _pip_reason(LUNAR)[1]  # a pin: no claim about later releases
    lower = "ERROR: No matching distribution found for torch>=1.10.2"
    line, why = _pip_reason(lower)
    assert "every release from 1.10.2" in why
    assert _pip_reason("ERROR: No matching distribution found for torch==1.10.2") is None  # a pin alone: unknown


def test_a_32_bit_os_is_a_32_bit_python():
    got = _got("torch.cuda.is_available() returns False", distro="Microsoft Windows 7 (32-bit)", os="Windows")
    assert "python-unsupported" in got
    assert "32-bit" in got["python-unsupported"].title
    assert "python-unsupported" not in _got(
        "torch.cuda.is_available() returns False", distro="Microsoft Windows 10 (64-bit)", os="Windows"
    )
