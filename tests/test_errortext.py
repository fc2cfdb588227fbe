"""The one error-text engine: signatures as data, check and triage agreeing, new failure classes on real texts.

Real texts are quoted from public threads (URL beside each). The agreement test runs `check` and `triage`
over every real case in ../shared/cases and asserts they name the same top cause.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudadoctor import registry
from cudadoctor.cli import cli
from cudadoctor.errortext import adjudicate, kb_signatures, rank, triage
from cudadoctor.errortext.signatures import kb_document
from cudadoctor.facts import Facts, new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)
_HERE = Path(__file__).resolve()
CASES = next((p for p in (_HERE.parents[2] / "shared" / "cases", _HERE.parents[3] / "shared" / "cases") if p.is_dir()),
             _HERE.parents[2] / "shared" / "cases")


def cases_with_errors():
    if not CASES.is_dir():
        return []
    return sorted(p for p in CASES.glob("*.error.txt"))


# --- the signatures are data with sources ------------------------------------------------------

def test_every_kb_signature_names_a_code_a_source_a_date_and_compiles():
    doc = kb_document()
    assert re.match(r"\d{4}-\d{2}-\d{2}$", doc["checked"])
    sigs = kb_signatures()
    assert len(sigs) >= 60
    for s in sigs:
        assert REG.code(s.code) is not None, f"{s.code}: not in the catalogue"
        assert s.sources and all(u.startswith("https://") for u in s.sources), s.code
        assert s.implies and re.match(r"\d{4}-\d{2}-\d{2}$", s.checked), s.code
        re.compile(s.regex)


def test_a_code_with_no_check_cannot_sneak_in_through_the_data():
    """The kb may only point at codes the catalogue documents (explain, docs page)."""
    codes = {s.code for s in kb_signatures()}
    for c in codes:
        assert (Path(__file__).parents[1] / "docs" / "codes" / f"{c}.md").exists(), c


# --- real texts of the new failure classes -------------------------------------------------------

REAL = [
    # https://github.com/Dao-AILab/flash-attention/issues/723
    ("extension-abi-mismatch", "ImportError: /usr/local/lib/python3.8/dist-packages/flash_attn_2_cuda.cpython-38-x86_64-linux-gnu.so: "
                               "undefined symbol: _ZN3c104cuda9SetDeviceEi", "flash-attn"),
    # https://github.com/sgl-project/sglang/issues/851
    ("extension-abi-mismatch", "[rank0]: ImportError: /usr/local/lib/python3.10/dist-packages/transformer_engine_extensions.cpython-310-x86_64-linux-gnu.so: "
                               "undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEE",
     "transformer-engine"),
    # https://github.com/facebookresearch/xformers/issues/982
    ("extension-abi-mismatch", "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
                               "    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)\n    Python  3.11.7 (you have 3.11.0)", "xformers"),
    # https://github.com/Dao-AILab/flash-attention/issues/1920
    ("extension-build-isolation", "$ pip install flash_attn\nCollecting flash_attn\n  Using cached flash_attn-2.8.3.tar.gz (8.4 MB)\n"
                                  "  Installing build dependencies ... done\n  Getting requirements to build wheel ... error\n"
                                  "  error: subprocess-exited-with-error\n\n  × Getting requirements to build wheel did not run successfully.\n"
                                  "  │ exit code: 1\n  ╰─> [20 lines of output]\n      Traceback (most recent call last):\n"
                                  "        File \"/tmp/pip-build-env-gwmgwy1l/overlay/lib/python3.12/site-packages/setuptools/build_meta.py\", line 331, in get_requires_for_build_wheel\n"
                                  "      ModuleNotFoundError: No module named 'torch'", "flash_attn"),
    # https://github.com/triton-lang/triton/issues/8539
    ("ptxas-arch-unsupported", "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
                               "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'", "TRITON_PTXAS_PATH"),
    # https://github.com/NVIDIA/nvidia-container-toolkit/issues/1227
    ("container-gpu-access-lost", "(container) $ nvidia-smi -L\nFailed to initialize NVML: Unknown Error", "docker restart"),
    # https://github.com/BenedictThompson-zz/Azure-Ethereum-mine/issues/2
    ("nouveau-bound", " ERROR: The Nouveau kernel driver is currently in use by your system.  This\n         driver is incompatible with the NVIDIA driver, and must be disabled\n",
     "blacklist nouveau"),
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/230 (the reverse case: open module, GPU without GSP support)
    ("open-kernel-module-unsupported", "[    3.513141] NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.", "proprietary"),
    # NVIDIA's kernel log wording for Blackwell with the proprietary module, as dmesg wraps it
    ("open-kernel-module-required", "[ 5.123456] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2b85)\n"
                                    "[ 5.123460] NVRM: installed in this system requires use of the NVIDIA open kernel modules.", "-open"),
    # https://github.com/lolo101/px1800kbd/issues/10 wording, for the nvidia module
    ("secure-boot-module-blocked", "$ sudo modprobe nvidia\nmodprobe: ERROR: could not insert 'nvidia': Key was rejected by service", "mokutil --import"),
    ("kernel-module-missing", "$ nvidia-smi\nmodprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic\n"
                              "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
     "linux-headers-6.8.0-45-generic"),
    # https://github.com/easydiffusion/easydiffusion/issues/379 wording, with the image's compat directory on the path
    ("cuda-compat-driver-mismatch", "LD_LIBRARY_PATH=/usr/local/cuda/compat/lib.real:/usr/local/nvidia/lib64\n"
                                    "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 803: system has unsupported display driver / cuda driver combination",
     "compat"),
    # https://github.com/pytorch/pytorch/issues/574 (a torch directory without its package files)
    ("torch-install-incomplete", "Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nImportError: cannot import name '_C' from 'torch' (unknown location)",
     "uninstall -y torch"),
    # https://github.com/Dao-AILab/flash-attention/issues/148 wording
    ("companion-arch-unsupported", "RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "sdpa"),
]


@pytest.mark.parametrize("code,text,in_fix", REAL, ids=[f"{r[0]}-{i}" for i, r in enumerate(REAL)])
def test_new_class_named_by_triage_and_check_with_an_exact_fix(code, text, in_fix):
    assert triage(text, REG)["candidates"][0]["code"] == code
    facts = new_facts("live")
    facts["user_error"] = {"text": text}
    report = diagnose(facts, REG)
    assert report.extra["diagnosis"]["code"] == code
    f = [f for f in report.findings if f.code == code]
    assert f and f[0].severity in ("error", "warning"), [(x.code, x.severity) for x in report.findings]
    assert any(in_fix in c for c in f[0].fix.commands), f[0].fix.commands
    assert f[0].check != "error-text", "the code's own check should make the finding, with its exact fix"


@pytest.mark.parametrize("text,code", [
    ("RuntimeError: CUDA driver error: CUDA_ERROR_NO_DEVICE", "no-gpu-visible"),  # by name
    ("THCudaCheck FAIL file=torch/csrc/cuda/Module.cpp line=109 error=38 : no CUDA-capable device is detected", "no-gpu-visible"),
    ("cudaErrorInsufficientDriver", "driver-too-old"),
    ("RuntimeError: CUDA error (35): CUDA driver version is insufficient for CUDA runtime version", "driver-too-old"),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 804: forward compatibility was attempted on non supported HW", "cuda-forward-compat"),
    ("CUDA_ERROR_SYSTEM_NOT_READY", "fabric-manager-missing"),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_ARCH_MISMATCH", "gpu-arch-unsupported"),
    ("ImportError: DLL load failed while importing _C: The specified module could not be found.", "dll-load-failure"),
    ("ImportError: DLL load failed while importing flash_attn_2_cuda: The specified procedure could not be found.", "extension-abi-mismatch"),
])
def test_cuda_errors_by_name_and_number_and_loader_wordings(text, code):
    assert triage(text, REG)["candidates"][0]["code"] == code


def test_803_in_a_plain_host_is_the_driver_mismatch_and_with_compat_it_is_the_image():
    plain = "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 803: system has unsupported display driver / cuda driver combination"
    assert triage(plain, REG)["candidates"][0]["code"] == "nvml-driver-mismatch"
    facts = new_facts("live")
    facts["user_error"] = {"text": plain}
    facts["environment"] = {"vars": {"LD_LIBRARY_PATH": "/usr/local/cuda/compat/lib.real:/usr/local/nvidia/lib64"}}
    facts["system"] = {"container": "docker"}
    report = diagnose(facts, REG)
    f = [f for f in report.findings if f.code == "cuda-compat-driver-mismatch"]
    assert f, [x.code for x in report.findings]
    assert any("LD_LIBRARY_PATH" in c for c in f[0].fix.commands)


def test_facts_that_contradict_the_text_lower_it_and_say_so():
    text = "ModuleNotFoundError: No module named 'torch'"
    facts = new_facts("collect_env")
    facts["torch"] = {"version": "2.5.1+cu124"}
    facts["user_error"] = {"text": text}
    cands, _ = rank([("user_error", text)], REG, fx=Facts(facts))
    tni = [c for c in cands if c.code.code == "torch-not-installed"][0]
    assert tni.contradicted_by and "installed" in tni.contradicted_by[0]["why"]
    plain, _ = rank([("user_error", text)], REG)
    assert tni.score < [c for c in plain if c.code.code == "torch-not-installed"][0].score


def test_an_uncovered_confident_diagnosis_becomes_a_finding_with_its_evidence():
    """A code no check ran for (a plugin's, a crashed check's): the engine reports the text's cause, with where it came from."""
    from cudadoctor.registry import Registry

    reg = Registry()
    code = REG.code("gpu-memory-occupied")
    reg.codes[code.code] = (code, "test")
    facts = new_facts("collect_env")
    text = "RuntimeError: CUDA out of memory. Tried to allocate 338.00 MiB (GPU 0; 3.95 GiB total capacity; 1.62 GiB already allocated; 23.00 MiB free)"
    facts["user_error"] = {"text": text}
    findings, diag = adjudicate(facts, [], [], reg)
    assert diag["code"] == "gpu-memory-occupied" and diag["where"] == "user_error"
    assert findings and findings[0].check == "error-text" and findings[0].evidence["user_error"].startswith("RuntimeError: CUDA out of memory")


def test_a_check_that_declined_its_code_is_not_overruled():
    """The built-in gpu-memory-occupied check needs live memory facts; on collect_env facts it declines: no finding is added."""
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": "RuntimeError: CUDA out of memory. Tried to allocate 338.00 MiB (GPU 0; 3.95 GiB total capacity)"}
    report = diagnose(facts, REG)
    assert report.extra["diagnosis"]["code"] == "gpu-memory-occupied"
    assert report.extra["diagnosis"]["confirmed_by_facts"] is False
    assert not [f for f in report.findings if f.code == "gpu-memory-occupied"]


# --- check and triage agree ------------------------------------------------------------------------

@pytest.mark.parametrize("error_file", cases_with_errors(), ids=lambda p: p.name.split(".")[0])
def test_check_and_triage_name_the_same_top_cause_on_every_real_case(error_file, tmp_path):
    base = error_file.with_name(error_file.name.replace(".error.txt", ""))
    case = json.loads(base.with_suffix(".json").read_text())
    ce = base.with_suffix(".txt")
    runner = CliRunner()
    r = runner.invoke(cli, ["check", "--from-collect-env", str(ce), "--error-file", str(error_file), "--format", "json"])
    doc = json.loads(r.output)
    check_top = doc["extra"]["diagnosis"]["code"]
    r2 = runner.invoke(cli, ["triage", "-f", str(error_file), "--from-collect-env", str(ce), "--format", "json"])
    triage_top = json.loads(r2.output)["candidates"][0]["code"]
    assert check_top == triage_top
    # and the same with the case's recorded facts (triage --facts / check --facts)
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(case["facts"]))
    r3 = runner.invoke(cli, ["check", "--facts", str(facts), "--error-file", str(error_file), "--format", "json"])
    r4 = runner.invoke(cli, ["triage", "-f", str(error_file), "--facts", str(facts), "--format", "json"])
    if r3.exit_code in (0, 1) and r4.exit_code in (0, 1):
        assert json.loads(r3.output)["extra"]["diagnosis"]["code"] == json.loads(r4.output)["candidates"][0]["code"]
    # the label is reported as an error or warning
    assert any(f["code"] == case["label"] and f["severity"] in ("error", "warning") for f in doc["findings"]), \
        [(f["code"], f["severity"]) for f in doc["findings"]]


def test_healthy_cases_get_no_error_findings():
    if not CASES.is_dir():
        pytest.skip("no shared cases")
    for j in CASES.glob("*.json"):
        case = json.loads(j.read_text())
        if case.get("label") != "healthy":
            continue
        r = CliRunner().invoke(cli, ["check", "--from-collect-env", str(j.with_suffix(".txt")), "--format", "json"])
        assert not [f["code"] for f in json.loads(r.output)["findings"] if f["severity"] == "error"], j.name


# --- one cleaner: what logs, mails, notebooks and issues do to real texts -------------------------

from cudadoctor.errortext import evidence as _evidence  # noqa: E402
from cudadoctor.errortext import signatures as _signatures  # noqa: E402
from cudadoctor.errortext.normalize import clean_lines, line_roles, normalize  # noqa: E402


@pytest.mark.parametrize("text,want,code", [
    # https://github.com/stackhpc/ansible-slurm-appliance/issues/287: rsyslog writes the kernel's newlines as #012
    ("Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this kernel "
     "module has the version 530.30.02.  Please#012NVRM: make sure that this kernel module and all NVIDIA driver#012NVRM: "
     "components have the same version.",
     "NVRM: API mismatch: the client has the version 535.54.03, but this kernel module has the version 530.30.02.",
     "nvml-driver-mismatch"),
    # https://github.com/NVIDIA/nvidia-docker/issues/182: journalctl, the wrapped lines indented under the prefix
    ("Aug 26 14:08:07 nyasara-linux kernel: NVRM: API mismatch: the client has the version 367.44, but\n"
     "                                      NVRM: this kernel module has the version 367.35.  Please\n"
     "                                      NVRM: make sure that this kernel module and all NVIDIA driver\n"
     "                                      NVRM: components have the same version.",
     "NVRM: API mismatch: the client has the version 367.44, but this kernel module has the version 367.35.",
     "nvml-driver-mismatch"),
    # https://github.com/Frogging-Family/nvidia-all/issues/394: dmesg, a newer driver naming its client
    ("[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)\n"
     "               NVRM: has the version 595.84, but this kernel module has\n"
     "               NVRM: the version 595.80.  Please make sure that this\n"
     "               NVRM: kernel module and all NVIDIA driver components\n"
     "               NVRM: have the same version.",
     "NVRM: API mismatch: the client 'kwin_wayland' (pid 1005) has the version 595.84, but this kernel module has the version 595.80.",
     "nvml-driver-mismatch"),
    # https://github.com/NVIDIA/NVSentinel/issues/155: the multi-line form of Xid 79
    ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
     "               NVRM: fallen off the bus and is not responding to commands.",
     "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system has fallen off the bus",
     "gpu-lost"),
])
def test_kernel_messages_from_any_log_read_as_one_line(text, want, code):
    norm = normalize(text)
    assert want in norm, norm
    assert triage(text, REG)["candidates"][0]["code"] == code


def test_separate_kernel_messages_stay_separate_lines():
    # https://github.com/pop-os/pop/issues/3363: two messages, each ended with a full stop
    text = ("Sep 23 18:37:03 xxx kernel: [   34.193759] NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, "
            "GPU has fallen off the bus.\nSep 23 18:37:03 xxx kernel: [   34.193770] NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.")
    assert normalize(text).split("\n") == [
        "NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        "NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.",
    ]


# https://github.com/whyNLP/LCKV/issues/17 (uv's wording; the root cause is the isolated build)
UV = ("ModuleNotFoundError: No module named 'torch'\n\nhint: This error likely indicates that `flash-attn@2.8.1` depends on `torch`, "
      "but doesn't declare it as a build dependency. If `flash-attn` is a first-party package, consider\nadding `torch` to its "
      "`build-system.requires`. Otherwise, `uv pip install torch` into the environment and re-run with `--no-build-isolation`.")


def test_a_tools_hint_after_the_error_is_part_of_its_message():
    lines = normalize(UV).split("\n")
    roles = line_roles(lines)
    assert [r for line, r in zip(lines, roles) if line.startswith("hint:")] == ["final"]
    assert triage(UV, REG)["candidates"][0]["code"] == "extension-build-isolation"
    # a line of output before it (a notebook's stdout, a log line) does not change the verdict
    assert triage("Installing flash-attn\n" + UV, REG)["candidates"][0]["code"] == "extension-build-isolation"


def test_a_notebook_pasted_as_json_reads_as_its_outputs():
    # the traceback lines of a real error, stored as a notebook stores them (ANSI colours, one list item per line)
    tb = ["\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
          "\x1b[0;31mRuntimeError\x1b[0m                              Traceback (most recent call last)",
          "Cell \x1b[0;32mIn[3], line 2\x1b[0m\n\x1b[1;32m      1\x1b[0m \x1b[38;5;28;01mimport\x1b[39;00m \x1b[38;5;21;01mtorch\x1b[39;00m",
          "\x1b[0;31mRuntimeError\x1b[0m: CUDA error: no kernel image is available for execution on the device"]
    nb = {"cells": [{"cell_type": "code", "source": ["import torch\n"], "outputs": [
        {"output_type": "stream", "name": "stderr", "text": ["UserWarning: \n", "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 "
                                                               "is not compatible with the current PyTorch installation.\n"]},
        {"output_type": "error", "ename": "RuntimeError", "evalue": "CUDA error", "traceback": tb}]}], "nbformat": 4}
    text = json.dumps(nb)
    norm = normalize(text)
    assert "RuntimeError: CUDA error: no kernel image is available for execution on the device" in norm
    assert "\x1b" not in norm and '"cells"' not in norm
    assert triage(text, REG)["candidates"][0]["code"] == "gpu-arch-unsupported"
    # the same outputs pasted as the notebook file stores one of them (JSON strings, one per line)
    fragment = '"traceback": [\n' + ",\n".join(json.dumps(x) for x in tb) + "\n]"
    assert "RuntimeError: CUDA error: no kernel image is available" in normalize(fragment)


def test_a_collapsed_blocks_caption_is_not_a_line_but_an_error_in_it_is():
    assert normalize("<details>\n<summary>Full traceback</summary>\n\n```\nRuntimeError: x\n```\n</details>").strip() == "RuntimeError: x"
    assert "RuntimeError: CUDA error" in normalize("<details><summary>RuntimeError: CUDA error</summary>\nmore\n</details>")


def test_the_readers_get_the_same_cleaning_line_for_line():
    from cudadoctor.readers._text import raw_lines

    text = "> PyTorch version: 2.1.0+cu121\r\n> Is CUDA available: False\r\n> CUDA used to build PyTorch：12.1\r\n"
    assert raw_lines(text) == clean_lines(text) == ["PyTorch version: 2.1.0+cu121", "Is CUDA available: False",
                                                      "CUDA used to build PyTorch:12.1", ""]
    # a log prefix goes, the user's indentation stays (it tells the parts of a paste apart)
    assert clean_lines("[   34.193759] NVRM: x\n    [rank0]: RuntimeError: y\n    File \"a.py\", line 1") == [
        "NVRM: x", "    [rank0]: RuntimeError: y", '    File "a.py", line 1']


# --- one evidence pass, one list of providers ----------------------------------------------------

def test_one_evidence_pass_per_run(monkeypatch):
    calls = []

    def counting(texts, extra):
        calls.append(texts)
        return _evidence.signature_matches(texts, extra)

    monkeypatch.setattr(_evidence, "PROVIDERS", (counting,))
    _evidence.of_texts.cache_clear()
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update "
                                   "your GPU driver"}
    report = diagnose(facts, REG)  # every check, then the adjudication
    assert report.extra["diagnosis"]["code"] == "driver-too-old"
    assert len(calls) == 1, calls
    triage(facts["user_error"]["text"], REG, report)  # triage on the same run reads the same evidence
    assert len(calls) == 1


def test_the_checks_have_no_matcher_of_their_own():
    import cudadoctor.checks._common as common

    assert not hasattr(common, "find_text") and not hasattr(common, "_unwrapped")
    assert _evidence.PROVIDERS[0] is _evidence.signature_matches


# --- every wording is data with its source --------------------------------------------------------

def test_built_in_codes_declare_no_wordings_of_their_own():
    builtin = registry.load(plugins=False)
    for name, (code, _src) in builtin.codes.items():
        assert not code.signatures, f"{name}: its wordings belong in cudadoctor/kb/errors/ with their sources"


def test_every_signature_file_is_read_in_order_and_a_bad_one_names_itself(tmp_path, monkeypatch):
    for doc_name, doc in _signatures.kb_documents():
        assert re.match(r"\d{4}-\d{2}-\d{2}$", doc["checked"]) and doc.get("about"), doc_name
    sig = {"code": "gpu-lost", "confidence": "high", "implies": "x", "sources": ["https://example.org/t/1"], "checked": "2026-11-27"}
    (tmp_path / "b.json").write_text(json.dumps({"checked": "2026-11-27", "about": "b", "signatures": [dict(sig, regex="second")]}))
    (tmp_path / "a.json").write_text(json.dumps({"checked": "2026-11-27", "about": "a", "signatures": [dict(sig, regex="first")]}))
    monkeypatch.setattr(_signatures, "ERRORS_DIR", tmp_path)
    _signatures.kb_documents.cache_clear()
    _signatures.kb_signatures.cache_clear()
    try:
        assert [s.regex for s in _signatures.kb_signatures()] == ["first", "second"]
        (tmp_path / "c.json").write_text(json.dumps({"checked": "2026-11-27", "signatures": [dict(sig, regex="([")]}))
        _signatures.kb_documents.cache_clear()
        _signatures.kb_signatures.cache_clear()
        with pytest.raises(_signatures.SignatureError, match="c.json"):
            _signatures.kb_signatures()
    finally:
        _signatures.kb_documents.cache_clear()
        _signatures.kb_signatures.cache_clear()


def test_the_engine_is_imported_whole_from_outside():
    """`check` imports the checks in a background thread while the main thread reads a paste: a module that
    imported one of the engine's modules directly could take it half-initialised from the other thread
    (a real `internal error: cannot import name ... from partially initialized module`). From the package,
    a thread waits for the other to finish."""
    pkg = Path(__file__).parents[1] / "cudadoctor"
    direct = re.compile(r"^\s*from\s+(?:cudadoctor|\.+)\.?errortext\.\w+\s+import|^\s*import\s+cudadoctor\.errortext\.", re.M)
    offenders = [str(p.relative_to(pkg)) for p in pkg.rglob("*.py") if "errortext" not in p.parts and direct.search(p.read_text())]
    assert not offenders, offenders


def test_a_field_or_two_in_a_fenced_block_of_prose_does_not_swallow_its_error_line():
    # https://github.com/SysCV/qd-3dt/issues/25, pasted plain and inside a fenced <details> block
    from cudadoctor.readers import issue

    text = ("My laptop env is\n\nNVIDIA RTX 3080\ncuda 11.1\nNVIDIA Driver Version: 470.57.02\n\nwhen I run bash install.sh\n"
            "with after pip install -r requriement.txt\n\n1. \nValueError: Unknown CUDA arch (8.6) or GPU not supported\n\n"
            "so I installed cuda 11.1 pytorch version.")
    fenced = f"<details>\n<summary>Full log</summary>\n\n```\n{text}\n```\n\n</details>\n"
    for t in (text, fenced):
        assert "ValueError: Unknown CUDA arch (8.6) or GPU not supported" in issue.read(t)["error_text"]
