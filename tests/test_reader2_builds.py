"""cudadoctor/checks/builds.py, kb/errors/builds2.json: cuda-home-malformed (CUDA_HOME that is not one toolkit
directory, seen in the nvcc path a build log prints or in the value a live run recorded) and
extension-build-without-gpu-arch-unset (a build with no GPU to read the target architecture from and no list set).
Real wordings, each from its public thread, in tests/data/error_corpus/builds2.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudadoctor.checks import builds
from cudadoctor.cli import cli
from cudadoctor.errortext.signatures import kb_documents
from cudadoctor.facts import Facts, new_facts

ROOT = Path(__file__).resolve().parents[1]
ROWS = [
    json.loads(ln)
    for ln in (ROOT / "tests" / "data" / "error_corpus" / "builds2.jsonl").read_text(encoding="utf-8").splitlines()
    if ln
]


def _codes(r) -> dict:
    assert r.exit_code in (0, 1), r.output
    # the rules' findings: the learned fallback's guess (check learned-cause) is tested in tests/test_learned*.py
    return {
        f["code"]: f
        for f in json.loads(r.stdout)["findings"]
        if f["severity"] in ("error", "warning") and f.get("check") != "learned-cause"
    }


@pytest.mark.parametrize("row", ROWS, ids=[r["source"].split("github.com/")[-1] for r in ROWS])
def test_each_real_wording_gives_the_code_through_both_doors(tmp_path, row):
    err = tmp_path / "error.txt"
    err.write_text(row["text"], encoding="utf-8")
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(new_facts("text")), encoding="utf-8")
    runner = CliRunner()
    by_error = _codes(runner.invoke(cli, ["check", "--facts", str(facts), "--error-file", str(err), "--format", "json"]))
    by_paste = _codes(runner.invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))
    for got in (by_error, by_paste):
        assert row["code"] in got, got
        assert got[row["code"]]["severity"] == "error"
        if row["code"] == "cuda-home-malformed":
            assert "cuda-home-not-set" not in got, got  # nvcc is installed: the value is wrong, not missing


def test_each_signature_is_proved_by_two_threads_it_names():
    import re

    from cudadoctor.errortext.normalize import normalize

    doc = dict(kb_documents())["builds2.json"]
    for sig in doc["signatures"]:
        rx = re.compile(sig["regex"], re.I)
        proving = {r["source"] for r in ROWS if r["code"] == sig["code"] and rx.search(re.sub(r"\s+", " ", normalize(r["text"])))}
        assert len(proving & set(sig["sources"])) >= 2, sig["regex"]


def test_the_finding_names_the_malformed_value_and_the_root_it_meant(tmp_path):
    # https://github.com/open-mmlab/mmdetection/issues/944
    (row,) = [r for r in ROWS if r["source"].endswith("mmdetection/issues/944")]
    err = tmp_path / "e.txt"
    err.write_text(row["text"], encoding="utf-8")
    f = _codes(CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))["cuda-home-malformed"]
    assert "'/usr/local/cuda-10.0:/usr/local/cuda-10.0:/usr/local/cuda-10.0:'" in f["title"]
    assert any(c.startswith("export CUDA_HOME=/usr/local/cuda-10.0 ") for c in f["fix"]["commands"]), f["fix"]


@pytest.mark.parametrize(
    "text",
    [
        # a missing toolkit, not a malformed CUDA_HOME: https://github.com/NVIDIA/nvidia-docker/issues/1322
        "/bin/sh: 1: nvcc: not found",
        # the well-formed path that does not exist: https://github.com/naruya/dl_remote/issues/8
        "[Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc': '/usr/local/cuda/bin/nvcc'",
        # a PATH list with nvcc after it, not a CUDA_HOME: https://github.com/Microway/gpu-burn/issues/8
        "PATH=.:/usr/bin:/usr/local/cuda/bin:/home/valen/.local/bin /bin/nvcc -I. -I/include --fatbin compare.cu\n"
        "/bin/sh: /bin/nvcc: No such file or directory",
    ],
)
def test_other_nvcc_failures_are_not_this_code(tmp_path, text):
    err = tmp_path / "e.txt"
    err.write_text(text, encoding="utf-8")
    assert "cuda-home-malformed" not in _codes(CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))


@pytest.mark.parametrize(
    "value,windows,why",
    [
        (":/usr/local/cuda-9.0", False, "stray ':'"),  # mmdetection#2113's echo $CUDA_HOME
        ("/usr/local/cuda-10.0:/usr/local/cuda-10.0", False, "stray ':'"),
        ("/usr/local/cuda-11.0/bin", False, "bin directory"),  # lbin/DCNv2#25's warning
        ("/usr/local/cuda/bin/nvcc", False, "nvcc itself"),
        ("'/usr/local/cuda'", False, "quotes"),  # AlphaPose#765's path
        ("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8;C:\\cuda\\v12.1", True, "stray ';'"),
        ("/usr/local/cuda-11.8", False, None),
        ("/usr/local/cuda/", False, None),
        ("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8", False, None),  # a drive letter's ':'
    ],
)
def test_a_recorded_value_is_judged_by_what_torch_does_with_it(value, windows, why):
    got = builds.malformed_reason(value, windows)
    assert (got is None) if why is None else (why in (got or "")), got


def test_a_live_run_with_a_malformed_value_warns_before_any_build():
    facts = new_facts("live")
    facts["toolkit"] = {"cuda_home": ":/usr/local/cuda-11.1"}
    (f,) = list(builds.cuda_home_malformed(Facts(facts)))
    assert f.code == "cuda-home-malformed" and f.severity == "warning"
    assert "export CUDA_HOME=/usr/local/cuda-11.1  # the toolkit's root (the directory holding bin/nvcc)" in f.fix.commands
    facts["toolkit"] = {"cuda_home": "/usr/local/cuda-11.1"}
    assert not list(builds.cuda_home_malformed(Facts(facts)))


def test_the_arch_list_is_named_from_the_gpus_the_facts_know():
    # https://github.com/NVlabs/tiny-cuda-nn/issues/200: the message, with two GPUs known from nvidia-smi
    (row,) = [r for r in ROWS if r["source"].endswith("tiny-cuda-nn/issues/200")]
    facts = new_facts("text")
    facts["nvml"] = {"devices": [{"index": 0, "name": "NVIDIA GeForce RTX 3090"}, {"index": 1, "name": "Tesla V100-SXM2-32GB"}]}
    facts["user_error"] = {"text": row["text"], "source": "pasted text"}
    (f,) = list(builds.build_without_gpu_arch(Facts(facts)))
    cmds = "\n".join(f.fix.commands)
    assert 'export TORCH_CUDA_ARCH_LIST="7.0;8.6+PTX"' in cmds, cmds
    assert "export TCNN_CUDA_ARCHITECTURES=70,86" in cmds, cmds


def test_other_index_errors_are_not_this_code(tmp_path):
    # an IndexError of the user's own code, not torch's arch list: https://github.com/raphaelmemmesheimer/sl-dml/issues/1
    err = tmp_path / "e.txt"
    err.write_text("IndexError: list index out of range", encoding="utf-8")
    got = _codes(CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))
    assert "extension-build-without-gpu-arch-unset" not in got


def test_a_pip_torch_missing_its_cuda_wheels_is_not_a_conda_cudatoolkit(tmp_path):
    # https://github.com/pytorch/pytorch/issues/88869: pip's torch 1.13 on a CPU-only image, outside conda
    text = (
        'bash-4.2# python3 -c "import torch"\n'
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        '  File "/usr/local/lib64/python3.7/site-packages/torch/__init__.py", line 191, in <module>\n'
        "    _load_global_deps()\n"
        '  File "/usr/local/lib64/python3.7/site-packages/torch/__init__.py", line 153, in _load_global_deps\n'
        "    ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)\n"
        "OSError: libcublas.so.11: cannot open shared object file: No such file or directory\n"
    )
    err = tmp_path / "e.txt"
    err.write_text(text, encoding="utf-8")
    got = _codes(CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))
    assert "conda-cudatoolkit-missing" not in got, got


def test_the_same_import_error_outside_conda_is_not_blamed_on_conda():
    # https://github.com/pytorch/pytorch/issues/5897's traceback, its path moved out of a conda environment
    (row,) = [r for r in ROWS if r["source"].endswith("pytorch/issues/5897")]
    facts = new_facts("text")
    facts["user_error"] = {"text": row["text"].replace("/home/kono/miniconda/envs/test/", "/usr/"), "source": "pasted text"}
    assert not list(builds.conda_cudatoolkit_missing(Facts(facts)))
    facts["user_error"]["text"] = row["text"]
    (f,) = list(builds.conda_cudatoolkit_missing(Facts(facts)))
    assert "conda install cudatoolkit=8.0  # in the same environment" in f.fix.commands


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/traveller59/second.pytorch/issues/7: sudo was the cause, but the text does not show it
        "nvcc -std=c++11 -c -o ../cc/nms/nms_kernel.cu.o ../cc/nms/nms_kernel.cu.cc -I/usr/local/cuda/include -x cu\n"
        "/bin/sh: 1: nvcc: not found",
        # https://github.com/NervanaSystems/neon/issues/37's own workaround: sudo that passes PATH on
        "sudo env PATH=$PATH make install\n/bin/sh: 1: nvcc: not found",
    ],
)
def test_nvcc_not_found_without_a_plain_sudo_is_not_this_code(tmp_path, text):
    err = tmp_path / "e.txt"
    err.write_text(text, encoding="utf-8")
    got = _codes(CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))
    assert "sudo-resets-path-nvcc-not-found" not in got, got


def test_a_cpu_only_torch_is_not_an_extension_built_without_cuda(tmp_path):
    # torch's own sentence (a CPU torch), from the error corpus: cpu-only-torch, not this code
    (d,) = [
        json.loads(ln)
        for ln in (ROOT / "tests" / "data" / "error_corpus" / "cuda-runtime.jsonl").read_text(encoding="utf-8").splitlines()
        if "Torch not compiled with CUDA enabled" in ln
    ][:1]
    err = tmp_path / "e.txt"
    err.write_text(d["text"], encoding="utf-8")
    got = _codes(CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))
    assert "extension-built-without-cuda" not in got and "cpu-only-torch" in got, got
