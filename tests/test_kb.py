"""Tests of the compatibility knowledge base (tables + API) on real values."""

import json
import re
from importlib import resources

import pytest

from cudadoctor import kb


# ------------------------------------------------------------------ table hygiene

def _table_files():
    return sorted(p for p in resources.files(kb).iterdir() if p.name.endswith(".json"))


def test_every_table_file_is_registered():
    assert {p.name[:-5] for p in _table_files()} == set(kb.TABLES)


@pytest.mark.parametrize("path", _table_files(), ids=lambda p: p.name)
def test_every_table_has_sources_checked_date_and_notes(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data.get("sources"), list) and data["sources"], f"{path.name}: no sources"
    for s in data["sources"]:
        assert s.get("title") and re.match(r"https?://", s.get("url", "")), f"{path.name}: bad source {s}"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", data.get("checked", "")), f"{path.name}: no checked date"
    assert "notes" in data


def test_tables_and_kb_date():
    t = kb.tables()
    assert set(t) == set(kb.TABLES)
    assert all(v["sources"] and v["checked"] for v in t.values())
    assert kb.kb_date() == max(v["checked"] for v in t.values()) >= "2026-11-26"


def test_arch_and_release_tables_agree():
    """Every arch-list build is a published variant of its release."""
    for series, builds in kb._load("torch_arch_lists")["builds"].items():
        rel = kb.torch_release(series)
        assert rel, series
        for variant in builds:
            assert variant in rel["variants"], (series, variant)


def test_every_version_in_the_tables_parses():
    """The look-ups sort and compare table versions without a None guard (kb._tv): each must parse."""
    drivers = kb._load("cuda_drivers")
    # A driver minimum may be null (unknown, e.g. CUDA 13 on Windows): the look-ups skip those.
    written = [d for row in drivers["toolkit_min_driver"].values() for d in row.values() if d is not None]
    written += [d for row in drivers["minor_compat_floor"].values() for d in row.values() if d is not None]
    written += list(drivers["toolkit_min_driver"]) + [cuda for _branch, cuda in drivers["driver_branch_cuda"]]
    rel = kb._load("torch_releases")
    written += list(rel["platform_last"].values()) + list(rel["releases"])
    for r in rel["releases"].values():
        written += list(r["patches"]) + [r["python"]["min"], r["python"]["max"]]
    written += list(kb._load("torch_arch_lists")["builds"])
    assert len(written) > 100
    for v in written:
        assert isinstance(v, str) and kb.parse_version(v), v


def test_a_table_version_that_does_not_parse_is_named():
    with pytest.raises(ValueError, match="'n/a' where a version belongs"):
        kb._tv("n/a")
    assert kb._tv("535.104.05") == (535, 104, 5) and kb._tmm("13") == (13, 0)


def test_gpu_table_has_no_silent_collisions():
    ambiguous = {kb._norm_gpu(n) for n in kb._load("gpu_compute_capability")["ambiguous"]}
    seen = {}
    for cc, names in kb._load("gpu_compute_capability")["gpus"].items():
        for n in names:
            k = kb._norm_gpu(n)
            assert k and k not in ambiguous, n
            assert seen.setdefault(k, cc) == cc, f"{n!r} maps to {seen[k]} and {cc}"


# ------------------------------------------------------------------ versions

@pytest.mark.parametrize("s, want", [
    ("2.6.0+cu126", (2, 6, 0)), ("12.4.131", (12, 4, 131)), ("535.104.05", (535, 104, 5)),
    ("2.1.0a0+git1234", (2, 1, 0)), ("3.11.7 (main, Dec 2023)", (3, 11, 7)), ("", None), (None, None),
])
def test_parse_version(s, want):
    assert kb.parse_version(s) == want


@pytest.mark.parametrize("ver, cuda, want", [
    ("2.6.0+cu126", "12.6", "cu126"), ("2.14.1", "13.0", "cu130"), ("2.6.0", None, "cpu"),
    ("2.4.0+cpu", None, "cpu"), ("2.5.1+rocm6.2", None, "rocm6.2"), ("1.8.1+cu111", "11.1", "cu111"),
])
def test_variant_of(ver, cuda, want):
    assert kb.variant_of(ver, cuda) == want


def test_cuda_of_variant_and_index_url():
    assert kb.cuda_of_variant("cu124") == "12.4"
    assert kb.cuda_of_variant("cu102") == "10.2"
    assert kb.cuda_of_variant("cu130") == "13.0"
    assert kb.cuda_of_variant("cpu") is None
    assert kb.index_url("cu124") == "https://download.pytorch.org/whl/cu124"


# ------------------------------------------------------------------ drivers

def test_min_driver_for_cuda():
    assert kb.min_driver_for_cuda("12.4") == "525.60.13"
    assert kb.min_driver_for_cuda("12.4", minor_compat=False) == "550.54.14"
    assert kb.min_driver_for_cuda("12.4.131", "windows", minor_compat=False) == "551.61"
    assert kb.min_driver_for_cuda("11.8") == "450.80.02"
    assert kb.min_driver_for_cuda("11.8", "windows") == "452.39"
    assert kb.min_driver_for_cuda("12.1", "windows") == "527.41"
    assert kb.min_driver_for_cuda("13.0") == "580"
    assert kb.min_driver_for_cuda("13.0", minor_compat=False) == "580.65.06"
    assert kb.min_driver_for_cuda("10.1") == "418.39"       # no minor compat before CUDA 11
    assert kb.min_driver_for_cuda("10.2", "windows") == "441.22"
    assert kb.min_driver_for_cuda("12.7", minor_compat=False) is None   # no such toolkit
    assert kb.min_driver_for_cuda("nonsense") is None


@pytest.mark.parametrize("driver, cuda", [
    ("410.48", "10.0"), ("418.56", "10.1"), ("440.33.01", "10.2"), ("450.57", "11.0"),
    ("470.182.03", "11.4"), ("470.57.02", "11.4"), ("525.60.11", "12.0"), ("535.104.05", "12.2"),
    ("550.40.07", "12.4"), ("565.57.01", "12.7"), ("570.133.07", "12.8"), ("575.57.08", "12.9"),
    ("580.95.05", "13.0"), ("590.48.01", "13.1"), ("595.71.05", "13.2"),
    ("566.36", "12.7"), ("581.80", "13.0"), ("527.41", "12.0"),      # Windows numbering
])
def test_max_cuda_for_driver_matches_observed_nvidia_smi(driver, cuda):
    assert kb.max_cuda_for_driver(driver) == cuda


def test_max_cuda_for_driver_edges():
    assert kb.max_cuda_for_driver("370.28") is None
    assert kb.max_cuda_for_driver("garbage") is None
    assert kb.max_cuda_for_driver("700.1") == "13.4"       # newer than known: lower bound


@pytest.mark.parametrize("driver, cuda, os, want", [
    ("410.48", "10.1", "linux", False),        # cu101 needs 418.39
    ("418.39", "10.1", "linux", True),
    ("470.182.03", "11.4", "linux", True),
    ("470.57.02", "11.8", "linux", True),      # 11.x minor-version compatibility
    ("450.51.06", "11.1", "linux", False),     # below the 450.80.02 floor
    ("450.80.02", "11.8", "linux", True),
    ("470.57.02", "12.1", "linux", False),     # different major family
    ("535.104.05", "12.8", "linux", True),
    ("525.60.13", "12.6", "linux", True),
    ("575.57.08", "13.0", "linux", False),     # 13.x needs R580
    ("580.65.06", "13.2", "linux", True),
    ("580.65.06", "12.6", "linux", True),      # backward compatibility
    ("452.39", "11.8", "windows", True),
    ("451.82", "11.1", "windows", False),
    ("528.33", "12.4", "windows", True),
    ("581.80", "13.0", "windows", True),
])
def test_driver_supports_cuda(driver, cuda, os, want):
    assert kb.driver_supports_cuda(driver, cuda, os) is want


def test_driver_supports_cuda_unknown():
    assert kb.driver_supports_cuda("x", "12.4") is None
    assert kb.driver_supports_cuda("535.104.05", "") is None
    assert kb.driver_supports_cuda("370.28", "8.0") is True        # CUDA 8.0.44 needs 367.48 (11.0 RC notes, Table 2)
    assert kb.driver_supports_cuda("340.29", "8.0") is False
    assert kb.driver_supports_cuda("340.29", "6.5") is None        # older than the tables
    assert kb.driver_supports_cuda("384.81", "8.0") is True        # backward compatibility


# ------------------------------------------------------------------ torch releases

def test_torch_release_2_6():
    r = kb.torch_release("2.6.0+cu124")
    assert r["version"] == "2.6.0" and r["series"] == "2.6"
    assert r["torchvision"] == "0.21.0" and r["torchaudio"] == "2.6.0"
    assert r["variants"] == ["cpu", "cu118", "cu124", "cu126"]
    assert r["default_variant"] == {"linux-x86_64": "cu124", "windows": "cpu", "linux-aarch64": "cpu", "macos": "cpu"}
    assert r["python"] == {"min": "3.9", "max": "3.13"}
    assert r["cudnn"]["cu124"] == "9.1.0.70"


def test_torch_release_measured_2_14():
    r = kb.torch_release("2.14.1")
    assert r["default_variant"]["linux-x86_64"] == "cu130"      # measured: 2.14.1+cu130 from PyPI
    assert r["cudnn"]["cu130"].startswith("9.24.0")            # measured: cuDNN 9.24.0
    assert r["torchvision"] == "0.29.1" and r["torchaudio"] is None
    assert r["python"]["max"] == "3.14"


@pytest.mark.parametrize("series, default", [
    ("1.12", "cu102"), ("1.13", "cu117"), ("2.0", "cu117"), ("2.1", "cu121"), ("2.4", "cu121"),
    ("2.5", "cu124"), ("2.6", "cu124"), ("2.7", "cu126"), ("2.8", "cu128"), ("2.10", "cu128"),
    ("2.11", "cu130"), ("2.13", "cu130"), ("2.14", "cu130"), ("2.15", "cu132"),
])
def test_default_pypi_variant_linux(series, default):
    assert kb.torch_release(series)["default_variant"]["linux-x86_64"] == default


def test_torch_release_series_and_unknown():
    assert kb.torch_release("2.9")["version"] == "2.9.1"
    assert kb.torch_release("2.6.3")["torchvision"] == "0.21"   # unknown patch -> series pairing
    assert kb.torch_release("0.4.1") is None
    assert kb.torch_release("") is None


@pytest.mark.parametrize("torch_v, tv", [
    ("2.6.0", "0.21.0"), ("2.0.0", "0.15.1"), ("2.0.1", "0.15.2"), ("1.13.1", "0.14.1"),
    ("2.7.1", "0.22.1"), ("2.9.1", "0.24.1"), ("2.12.1", "0.27.1"), ("2.13.0", "0.28.0"), ("2.14.0", "0.29.0"),
])
def test_torchvision_pairing(torch_v, tv):
    assert kb.torchvision_for_torch(torch_v) == tv
    assert kb.torch_for_torchvision(tv) == torch_v


def test_torchvision_pairing_by_series():
    assert kb.torch_for_torchvision("0.29.2") == "2.14"
    assert kb.torch_for_torchvision("0.11.0") == "1.10"
    assert kb.torch_for_torchvision("0.99.0") is None
    assert kb.torchvision_for_torch("2.15.0") is None            # none published yet


def test_python_support():
    assert kb.python_supported("2.6.0", "3.13") is True
    assert kb.python_supported("2.4.1", "3.13") is False
    assert kb.python_supported("2.5.1", "3.13.1") is True          # cp313 wheels exist
    assert kb.python_supported("1.13.1", "3.11") is True
    assert kb.python_supported("2.15.0", "3.10") is False
    assert kb.python_supported("9.9", "3.11") is None
    assert kb.newest_torch_for_python("3.10") == "2.14.1"
    assert kb.newest_torch_for_python("3.8") == "2.4.1"
    assert kb.newest_torch_for_python("3.12", "macos-x86_64") == "2.2.2"
    assert kb.newest_torch_for_python("2.7") is None


def test_newest_release():
    assert kb.newest_release() == "2.15.0"


# ------------------------------------------------------------------ architectures

def test_arch_list_measured_2_14_1_cu130():
    assert kb.arch_list("2.14.1+cu130", "cu130") == {
        "sass": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], "ptx": []}


def test_arch_list_known_and_unknown():
    assert kb.arch_list("1.8.1", "cu102") == {"sass": ["sm_37", "sm_50", "sm_60", "sm_70"], "ptx": []}
    assert kb.arch_list("2.7.0", "cu128")["ptx"] == ["compute_120"]
    assert "sm_70" not in kb.arch_list("2.11.0", "cu128")["sass"]
    assert kb.arch_list("2.6.0", "cpu") is None
    assert kb.arch_list("2.6.0", "cu130") is None


@pytest.mark.parametrize("cap, archs, want", [
    ("8.6", ["sm_80"], "sass"),                                  # same major, lower minor
    ("8.9", ["sm_75", "sm_80", "sm_86"], "sass"),
    ("8.0", ["sm_86"], None),                                    # higher minor does not run
    ("9.0", ["sm_86"], None),                                    # never across majors
    ("12.0", ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], None),
    ("12.0", ["compute_90"], "ptx"),                             # PTX JITs forward
    ("12.0", ["sm_80", "compute_90"], "ptx"),
    ("8.6", ["compute_90"], None),                               # PTX does not run backwards
    ("9.0", ["sm_90a"], "sass"),
    ("10.0", ["sm_90a"], None),                                  # 'a' is exact-only
    ("10.3", ["sm_100a"], None),
    ("10.3", ["sm_100f"], "sass"),                               # 'f' is family (same major)
    ("12.1", ["sm_120"], "sass"),
    ("7.5", ["sm_37", "sm_50", "sm_60", "sm_70"], "sass"),           # cu102 lists cover Turing via sm_70
    ("3.5", ["sm_37"], None),
    ("6.1", ["sm_60"], "sass"),
    ("8.6", [], None),
    ("junk", ["sm_80"], None),
])
def test_arch_runs(cap, archs, want):
    assert kb.arch_runs(cap, archs) == want


def test_arch_runs_accepts_arch_list_dict():
    assert kb.arch_runs("12.0", kb.arch_list("2.6.0", "cu126")) is None
    assert kb.arch_runs("12.0", kb.arch_list("2.7.0", "cu128")) == "sass"
    assert kb.arch_runs("7.0", kb.arch_list("2.14.1", "cu130")) is None


def test_releases_with_arch():
    blackwell = kb.releases_with_arch("12.0")
    assert blackwell[0][0] == "2.15"
    assert ("2.7", "cu128") in blackwell and ("2.6", "cu126") not in blackwell
    pascal = kb.releases_with_arch("6.1")
    assert pascal[0] == ("2.14", "cu126")                     # 2.15 dropped CUDA 12.6 and Pascal
    assert ("2.15", "cu130") not in pascal
    kepler = kb.releases_with_arch("3.7")
    assert kepler[0] == ("2.7", "cu118")
    assert kb.releases_with_arch("3.0") == []
    series = [parse for parse, _ in blackwell]
    assert series == sorted(series, key=kb.parse_version, reverse=True)


def test_variants_for_driver():
    assert kb.variants_for_driver("2.6.0", "535.104.05") == ["cu126", "cu124", "cu118"]
    assert kb.variants_for_driver("2.7.0", "470.57.02") == ["cu118"]
    assert kb.variants_for_driver("2.14.1", "535.104.05") == ["cu126"]
    assert kb.variants_for_driver("2.14.1", "580.95.05") == ["cu132", "cu130", "cu126"]
    assert kb.variants_for_driver("2.15.0", "570.133.07") == []
    assert kb.variants_for_driver("1.8.1", "410.48") == []
    assert kb.variants_for_driver("9.9.9", "580.95.05") == []


# ------------------------------------------------------------------ GPUs

@pytest.mark.parametrize("name, cc", [
    ("NVIDIA GeForce RTX 5090 D", "12.0"), ("GeForce RTX 5090 D", "12.0"), ("NVIDIA GeForce RTX 5090", "12.0"),
    ("Tesla K40m", "3.5"), ("Tesla K80", "3.7"),
    ("NVIDIA H100 80GB HBM3", "9.0"), ("NVIDIA H100 PCIe", "9.0"), ("NVIDIA H100 NVL", "9.0"),
    ("NVIDIA GH200 480GB", "9.0"), ("NVIDIA H200", "9.0"),
    ("NVIDIA A100-SXM4-40GB", "8.0"), ("A100-SXM4-80GB", "8.0"), ("NVIDIA A100 80GB PCIe", "8.0"),
    ("Tesla V100-SXM2-32GB", "7.0"), ("Tesla P100-PCIE-16GB", "6.0"), ("Tesla T4", "7.5"),
    ("NVIDIA GeForce RTX 4090 Laptop GPU", "8.9"), ("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6"),
    ("GeForce RTX 2080 with Max-Q Design", "7.5"), ("GeForce GTX 1060 6GB", "6.1"),
    ("nvidia geforce rtx 3090", "8.6"), ("  NVIDIA  GeForce RTX 3090 ", "8.6"),
    ("NVIDIA TITAN X (Pascal)", "6.1"), ("GeForce GTX TITAN X", "5.2"),
    ("NVIDIA RTX 6000 Ada Generation", "8.9"), ("Quadro RTX 6000", "7.5"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"), ("NVIDIA B200", "10.0"), ("NVIDIA GB10", "12.1"),
    ("NVIDIA L4", "8.9"), ("NVIDIA A10G", "8.6"), ("NVIDIA GeForce RTX 2050", "8.6"),
    ("Orin", "8.7"), ("NVIDIA Tegra X1", "5.3"), ("GeForce MX130", "5.0"),
])
def test_compute_capability(name, cc):
    assert kb.compute_capability(name) == cc


@pytest.mark.parametrize("name", [
    "GeForce GT 730", "GeForce GT 640", "GeForce GTX 860M", "NVIDIA TITAN X",     # ambiguous
    "NVIDIA GeForce RTX 9090", "Radeon RX 7900 XTX", "", "NVIDIA", "RTX",
])
def test_compute_capability_unknown_is_none(name):
    assert kb.compute_capability(name) is None


@pytest.mark.parametrize("cap, cores", [
    ("3.5", 192), ("5.2", 128), ("6.0", 64), ("6.1", 128), ("7.0", 64), ("7.5", 64), ("8.0", 64),
    ("8.6", 128), ("8.9", 128), ("9.0", 128), ("10.0", 128), ("12.0", 128), ("12.1", 128),
])
def test_cores_per_sm(cap, cores):
    assert kb.cores_per_sm(cap) == cores


def test_cores_per_sm_unknown():
    assert kb.cores_per_sm("2.0") is None
    assert kb.cores_per_sm("x") is None


def test_platform_aware_python_support_and_jetson_names():
    # Windows got Python 3.11 wheels with torch 2.0.0 and 3.13 with 2.6.0; Linux earlier (kb/python_wheels.json)
    assert kb.python_supported("1.13.1", "3.11") is True and kb.python_supported("1.13.1", "3.11", "windows") is False
    assert kb.python_supported("2.5.1", "3.13", "windows") is False and kb.python_supported("2.6.0", "3.13", "windows") is True
    # Jetson torch reports its GPU as "Orin (nvgpu)"; Tesla/Fermi names are known (no binary below 3.0)
    assert kb.compute_capability("Orin (nvgpu)") == "8.7" and kb.compute_capability("GeForce 210") == "1.2"
