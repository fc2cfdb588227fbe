"""The interpretation layer (cudadoctor.interpret): facts -> meanings, on real inputs.

collect_env texts in tests/fixtures/collect_env are verbatim public reports; the live facts in
tests/fixtures/facts were recorded on this machine.
"""

from __future__ import annotations

import copy

import pytest
from conftest import FIXTURES, SHARED, load_fixture

from cudadoctor import fleet, kb, registry
from cudadoctor.readers.collect_env import parse_collect_env
from cudadoctor.facts import Facts, FactsError, parse_document
from cudadoctor.interpret import (
    arch_bound,
    build_kind,
    cuda_of_variant,
    environment,
    gpus,
    local_tag,
    mm,
    mm_str,
    build_arch_list,
    is_cuda_build,
    newer_than_all,
    release_of,
    situation,
    torch_cuda,
    torch_version,
    variant,
    variant_of_cuda,
    variant_of_tag,
    vtuple,
)
from cudadoctor.report import diagnose

CE = FIXTURES / "collect_env"
HUGE = "9" * 5000  # longer than int() reads: must read as unknown, never raise


def ce(name: str) -> Facts:
    return Facts(parse_collect_env((CE / name).read_text()))


# ---------------------------------------------------------------- versions

def test_one_version_parser_for_every_shape():
    assert vtuple("2.6.0+cu126") == (2, 6, 0)
    assert vtuple("535.104.05") == (535, 104, 5)
    assert vtuple("3.11.7 (main, Dec  8 2023)") == (3, 11, 7)
    assert vtuple(12) == (12,)
    for bad in (None, True, [2, 6], {"v": 1}, "", "N/A", HUGE, HUGE + ".1"):
        assert vtuple(bad) is None, bad
    assert kb.parse_version("2.6.0+cu126") == vtuple("2.6.0+cu126")  # the kb reads versions the same way
    assert mm("12") == (12, 0) and mm_str("12.4.131") == "12.4" and mm_str("x") is None
    assert release_of("2.6.0+cu126") == "2.6.0" and release_of(None) is None


@pytest.mark.parametrize("version, tag, variant", [
    ("2.6.0+cu126", "cu126", "cu126"),
    ("2.5.1+rocm6.2", "rocm6.2", "rocm6.2"),
    ("2.0.0+cpu.cxx11.abi", "cpu.cxx11.abi", "cpu"),
    ("2.11.0+gitd0c8b1f", "gitd0c8b1f", None),  # a source build: the tag says nothing of CUDA
    ("2.6.0", None, None),
    (None, None, None),
])
def test_wheel_tags(version, tag, variant):
    assert local_tag(version) == tag
    assert variant_of_tag(version) == variant


def test_cuda_and_variant_names():
    assert cuda_of_variant("cu92") == "9.2" and cuda_of_variant("cu130") == "13.0"
    assert cuda_of_variant("cpu") is None and cuda_of_variant(None) is None and cuda_of_variant("cuda") is None
    assert variant_of_cuda("12.6") == "cu126" and variant_of_cuda(None) is None


# ---------------------------------------------------------------- torch build, GPUs, environment (real texts)

def test_cuda_build_from_a_torch16_report_and_gpus_by_name():
    fx = ce("pytorch-43058-torch160-two-v100.txt")
    assert (torch_version(fx), build_kind(fx), variant(fx), torch_cuda(fx)) == ("1.6.0", "cuda", "cu102", "10.2")
    assert fx.bool("torch.debug") is False
    assert build_arch_list(fx) == (None, None)  # the kb has no arch list for 1.6: unknown, not guessed
    gs = gpus(fx)
    assert [g["name"] for g in gs] == ["Tesla V100-PCIE-16GB"] * 2
    assert {(g["capability"], g["capability_source"]) for g in gs} == {("7.0", "kb (by GPU name)")}
    assert situation(fx) == "collect_env"


def test_rocm_source_build_is_rocm_without_a_variant():
    fx = ce("vllm-48453-sections-rocm-envvars.txt")
    assert (build_kind(fx), variant(fx), torch_cuda(fx), fx.str("torch.hip")) == ("rocm", None, None, "7.2.53211")
    assert is_cuda_build(fx) is False


def test_cpu_build_on_macos():
    fx = ce("pytorch-121067-torch222-macos-cpu-none.txt")
    assert (build_kind(fx), variant(fx), is_cuda_build(fx)) == ("cpu", "cpu", False)
    env = environment(fx)
    assert (env.os, env.platform, env.installer) == ("macos", "macos-x86_64", "pip")


def test_arch_list_from_the_kb_for_an_official_wheel_on_windows():
    fx = ce("pytorch-51858-torch201-windows.txt")
    archs, source = build_arch_list(fx)
    assert variant(fx) == "cu117" and source == "kb: official torch 2.0 cu117 wheel"
    assert archs is not None and "sm_86" in archs and "sm_90" not in archs
    assert gpus(fx)[0]["capability"] == "6.1"
    env = environment(fx)
    assert (env.os, env.driver_os, env.companions) == ("windows", "windows", ("torchvision", "torchaudio"))


def test_live_facts_prefer_what_torch_said():
    fx = Facts(load_fixture("live-torch2141-cu130-nodriver.json"))
    assert (torch_version(fx), build_kind(fx), variant(fx), torch_cuda(fx)) == ("2.14.1+cu130", "cuda", "cu130", "13.0")
    assert situation(fx) == "container"  # recorded inside this machine's docker container
    bare = copy.deepcopy(fx.data)
    del bare["system"]["container"]
    assert situation(Facts(bare)) == "live"
    bare["system"]["wsl"] = True
    assert situation(Facts(bare)) == "wsl"


def test_installed_metadata_when_torch_was_not_imported():
    fx = Facts({"torch": {"status": "skipped"}, "packages": {"distributions": [{"name": "torch", "version": "2.4.1+cu121"}]}})
    assert (torch_version(fx), is_cuda_build(fx), variant(fx), torch_cuda(fx)) == ("2.4.1+cu121", True, "cu121", "12.1")
    assert build_kind(fx) is None  # torch itself said nothing: the installed wheel's tag tells


# ---------------------------------------------------------------- bad facts read as unknown, never as a crash

def test_kb_answers_none_for_what_the_checks_used_to_guard():
    assert kb.min_driver_for_cuda(HUGE) is None
    assert kb.driver_supports_cuda(HUGE, "12.4") is None and kb.driver_supports_cuda("550.54", HUGE) is None
    assert kb.arch_runs(HUGE + ".0", ["sm_80"]) is None and kb.arch_runs("8.6", [None, 3, "sm_80"]) == "sass"
    assert kb.torch_release([2, 6]) is None and kb.torch_release(HUGE) is None
    assert kb.variants_for_driver("2.6.0", HUGE) == [] and kb.releases_with_arch(HUGE) == []
    assert kb.python_supported("2.6", HUGE) is None and kb.newest_torch_for_python(HUGE) is None
    assert kb.cuda_of_variant(None) is None and kb.cores_per_sm(HUGE) is None
    assert kb.compute_capability(12345) is None


def test_checks_read_absurd_values_as_unknown_not_as_check_crashed():
    facts = load_fixture("live-torch2141-cu130-nodriver.json")
    facts["torch"].update({"version": HUGE + "+cu" + HUGE, "cuda": HUGE, "arch_list": ["sm_" + HUGE]})
    facts["nvml"].update({"status": "ok", "driver_version": HUGE, "device_count": 1,
                          "devices": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "compute_capability": HUGE + ".0"}]})
    facts["python"]["version"] = HUGE
    report = diagnose(facts, registry.load(plugins=False))
    crashed = [f.evidence for f in report.findings if f.code == "check-crashed"]
    assert not crashed, crashed


# ---------------------------------------------------------------- one reader of documents

@pytest.mark.parametrize("text, says", [
    (b"", "empty file"),
    (b"\xff\xfe{}", "not UTF-8 text"),
    (b'{"kind": "cudadoctor-facts", "schema_version": 1, "nvml": [', "truncated JSON"),
    (b"[1, 2]", "expected a JSON object"),
    (b'{"kind": "cudadoctor-facts", "schema_version": 1, "nvml": []}', "section 'nvml' should be an object, got a list"),
    (b'{"kind": "cudadoctor-report", "schema_version": 99, "facts": {}}', "written by a newer cudadoctor (schema 99"),
])
def test_check_and_fleet_refuse_a_bad_document_with_the_same_words(text, says):
    with pytest.raises(FactsError) as e:
        parse_document(text, "x.json")
    with pytest.raises(fleet.UnreadableFile) as f:
        fleet.parse(text)
    assert says in str(f.value) and str(e.value) == "x.json: " + str(f.value)


# ---------------------------------------------------------------- partial facts (issue 14, point 3)

SHARED_CASES = SHARED / "cases"


def test_the_cuda_version_alone_bounds_the_architectures():
    only_cuda = lambda cuda: Facts({"torch": {"cuda": cuda}})  # noqa: E731 - the release is unknown
    archs, source = arch_bound(only_cuda("12.6"))
    assert source == "kb: every official cu126 wheel (torch 2.6–2.14) built with CUDA 12.6"
    assert newer_than_all("12.0", archs) is True          # Blackwell: CUDA 12.6 predates it
    assert newer_than_all("9.0", archs) is False          # Hopper is in every cu126 wheel
    assert newer_than_all("12.0", arch_bound(only_cuda("12.8"))[0]) is False  # cu128 ships sm_120
    assert arch_bound(Facts({"torch": {"version": "2.6.0+cpu"}})) == (None, None)
    assert newer_than_all(HUGE, archs) is False


def _case_text(case_id: str) -> str:
    p = SHARED_CASES / f"{case_id}.txt"
    if not p.is_file():
        pytest.skip("../shared/cases is not beside the repository")
    return p.read_text()


def _arch_findings(text: str):
    facts = parse_collect_env(text)
    return [f for f in diagnose(facts, registry.load(plugins=False)).findings if f.code == "gpu-arch-unsupported"]


def test_a_paste_cut_before_the_torch_version_still_shows_the_gpu_is_too_new():
    """Case 001 (RTX 5090 D, torch 2.6.0+cu126), as users paste it cut: without the `PyTorch version`
    line and the pip list, only `CUDA used to build PyTorch: 12.6` and the GPU remain. Before, the
    verdict was "PyTorch can use the GPUs"; the CUDA version alone rules sm_120 out."""
    full = _case_text("001-rtx5090d-torch26-cu126")
    cut = "\n".join(ln for ln in full.splitlines()
                    if not ln.startswith(("PyTorch version", "[pip3] torch", "[pip3] nvidia", "[conda] torch")))
    assert "CUDA used to build PyTorch: 12.6" in cut and "2.6.0" not in cut
    (f,) = _arch_findings(cut)
    assert f.severity == "error" and "sm_120" in f.title and "CUDA 12.6" in f.title
    assert f.evidence["build_archs_source"].startswith("kb: every official cu126 wheel")
    assert "cu128" in " ".join(f.fix.commands)
    # The whole text still uses the wheel's own list, not the bound.
    (g,) = _arch_findings(full)
    assert g.evidence["build_archs_source"] == "kb: official torch 2.6 cu126 wheel"


def test_a_nightly_or_source_build_has_no_release_arch_list():
    """A nightly's arch list is not its release's (pytorch 1.9.0.dev20210302+cu111 dropped sm_61 that 1.9.0 has)."""
    from cudadoctor.facts import Facts, new_facts
    from cudadoctor.interpret import build_arch_list

    f = new_facts("collect_env")
    f["torch"].update({"version": "1.9.0+cu111", "cuda": "11.1"})
    assert build_arch_list(Facts(f))[0]  # the release: the kb knows it
    for nightly in ("1.9.0.dev20210302+cu111", "2.1.0a0+git1234abc"):
        f["torch"]["version"] = nightly
        assert build_arch_list(Facts(f)) == (None, None)
