"""gpu-memory-occupied from the text and from a pasted nvidia-smi: another process holds the GPU's memory.

torch's out-of-memory message in each release's form (c10/cuda/CUDACachingAllocator.cpp: 1.0-1.4 "... free; X
cached)", 1.5-2.0 "... reserved in total by PyTorch)", 2.1 "has a total capacty of", 2.2+ "capacity"), CUDA's own
out-of-memory outside the allocator (context creation), and reporters saying the memory was not released.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from cudadoctor import registry
from cudadoctor.checks.gpu_state import _oom_figures
from cudadoctor.cli import cli
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)
GIB = 2**30


def _findings(text: str, origin: str = "collect_env"):
    """The rules' findings (the learned fallback's guess, check learned-cause, is tested in tests/test_learned*.py)."""
    facts = new_facts(origin)
    facts["user_error"] = {"text": text}
    return [(f.severity, f.code, f.title) for f in diagnose(facts, REG).findings if f.check != "learned-cause"]


def _occupied(text: str):
    return [(s, t) for s, c, t in _findings(text) if c == "gpu-memory-occupied"]


# https://github.com/pytorch/pytorch/issues/40863 (torch 1.5.1, K80): albanD: "530.00 MiB reserved in total by PyTorch"
# and "12.50 MiB free", so something else holds the memory.
OOM_15_ELSEWHERE = (
    "RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 11.17 GiB total capacity; 505.96 MiB already "
    "allocated; 12.50 MiB free; 530.00 MiB reserved in total by PyTorch)"
)
# torch 1.0-1.4 printed the allocator's unallocated cache as "cached" (a Leres issue quoted in a public repository).
OOM_10_OWN = (
    "RuntimeError: CUDA out of memory. Tried to allocate 2.56 GiB (GPU 0; 15.90 GiB total capacity; 10.38 GiB already "
    "allocated; 1.83 GiB free; 2.99 GiB cached)"
)
# format_size prints "0 bytes" (a training README in a public repository, batch size reduced to fix it).
OOM_20_ZERO_BYTES = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.36 GiB "
    "already allocated; 0 bytes free; 3.48 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try "
    "setting max_split_size_mb to avoid fragmentation."
)
# torch 2.1 ("capacty"), a public eval-sweep log: a SIGSTOPped training process (224599) held 21.48 GiB; the
# failing process is listed as "Process 277412" (no "this process has" line: NVML's pid did not match).
OOM_21_ELSEWHERE = (
    "CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacty of 23.52 GiB of which 212.69 MiB is free. "
    "Process 224599 has 21.48 GiB memory in use. Process 277412 has 1.75 GiB memory in use. Of the allocated memory 1.15 GiB "
    "is allocated by PyTorch, and 143.83 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
    "large try setting max_split_size_mb to avoid fragmentation."
)
# torch 2.1, the process itself holds it (a fine-tuning report quoted in a public repository; NVML lists it as Process 3258).
OOM_21_OWN_AS_PROCESS = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a total capacty of 14.75 GiB of "
    "which 11.06 MiB is free. Process 3258 has 14.73 GiB memory in use. Of the allocated memory 14.04 GiB is allocated by "
    "PyTorch, and 509.85 MiB is reserved by PyTorch but unallocated."
)
# torch 2.2+, "Including non-PyTorch memory, this process has" (an inductor fuzzing log in a public repository).
OOM_22_OWN = (
    "OutOfMemoryError: CUDA out of memory. Tried to allocate 7.22 GiB. GPU 0 has a total capacity of 23.69 GiB of which "
    "7.09 GiB is free. Process 2006998 has 256.00 MiB memory in use. Including non-PyTorch memory, this process has 16.33 GiB "
    "memory in use. Of the allocated memory 15.65 GiB is allocated by PyTorch, and 397.31 MiB is reserved by PyTorch but "
    "unallocated."
)


def test_every_release_form_of_the_message_is_read():
    gpu, total, free, mine, _ = _oom_figures(OOM_15_ELSEWHERE)
    assert gpu == "0" and round(total / GIB, 2) == 11.17 and round(mine / 2**20, 2) == 530.00
    _g, total, free, mine, _ = _oom_figures(OOM_10_OWN)
    assert round(mine / GIB, 2) == round(10.38 + 2.99, 2)  # "cached" is what the allocator holds beyond the allocated
    _g, total, free, mine, _ = _oom_figures(OOM_20_ZERO_BYTES)
    assert free == 0 and round(mine / GIB, 2) == 3.48
    _g, total, free, mine, _ = _oom_figures(OOM_21_ELSEWHERE)
    assert round(total / GIB, 2) == 23.52 and round(mine / GIB, 2) == round(1.15 + 143.83 / 1024, 2)
    _g, total, free, mine, _ = _oom_figures(OOM_22_OWN)
    assert round(mine / GIB, 2) == 16.33
    assert _oom_figures("RuntimeError: CUDA out of memory. Tried to allocate 338.00 MiB (GPU 0; 3.95 GiB total capacity)") is None


def test_memory_held_outside_the_failing_process_is_named():
    for text in (OOM_15_ELSEWHERE, OOM_21_ELSEWHERE):
        got = _occupied(text)
        assert got and got[0][0] == "warning" and "held outside this process" in got[0][1], (text[:60], got)


def test_memory_the_process_holds_itself_is_not_blamed_on_others():
    for text in (OOM_10_OWN, OOM_20_ZERO_BYTES, OOM_21_OWN_AS_PROCESS, OOM_22_OWN):
        assert _occupied(text) == [], text[:80]


def test_cudas_own_out_of_memory_outside_the_allocator_points_at_other_processes():
    """https://github.com/phil-bergmann/tracking_wo_bnw/issues/57: "RuntimeError: CUDA error: out of memory" at start-up on
    GPUs that other jobs had filled (nvidia-smi listed no process); numba's context creation failing the same way
    (https://github.com/sshaoshuai/PointRCNN/issues/47)."""
    for text in (
        'Traceback (most recent call last):\n  File "test_tracktor.py", line 64, in main\nRuntimeError: CUDA error: out of memory',
        "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuDevicePrimaryCtxRetain results in CUDA_ERROR_OUT_OF_MEMORY",
    ):
        got = _occupied(text)
        assert got and got[0][0] == "warning" and "another process" in got[0][1], (text, got)


def test_memory_not_released_after_a_program_ended_is_read_in_two_languages():
    """https://github.com/pytorch/pytorch/issues/4031 (Ctrl-C, workers outlive the parent) and
    https://github.com/bharatsingh430/py-R-FCN-multiGPU/issues/15; a Chinese report of the same ("显存不会释放")."""
    for text in (
        "When I interrupt my Pytorch script using Ctrl-C occasionally GPU memory is not deallocated.",
        "I faced a problem that the GPU memory not released normally after I interrupted the training script",
        "nohup 启动训练进程之后直接kill主进程显卡不会释放显存",
    ):
        assert _occupied(text), text
    assert not _occupied("After the script ends the GPU memory is released and nvidia-smi shows 0MiB.")


# https://github.com/pytorch/pytorch/issues/910 (a crashed program's memory still taken on GPU 0), pasted without the
# table's header line, as reporters often cut it, beside the out-of-memory error of the next run.
HEADLESS_SMI = """RuntimeError: CUDA error: out of memory

|   0  GeForce GTX TIT...  Off  | 0000:03:00.0     Off |                  N/A |
| 24%   63C    P2    72W / 250W |  11409MiB / 12207MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  GeForce GTX TIT...  Off  | 0000:06:00.0      On |                  N/A |
| 22%   49C    P8    18W / 250W |    698MiB / 12204MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
"""


def test_a_pasted_nvidia_smi_table_without_its_header_shows_the_occupied_gpu():
    r = CliRunner().invoke(cli, ["check", "--from-text", "-", "--format", "json"], input=HEADLESS_SMI)
    assert r.exit_code in (0, 1), r.output
    found = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "gpu-memory-occupied"]
    assert len(found) == 1 and found[0]["severity"] == "warning", found
    assert found[0]["title"].startswith("GPU 0 (GeForce GTX TIT...): 11.1 of 11.9 GiB were in use"), found[0]["title"]


def test_a_pasted_busy_gpu_without_an_out_of_memory_error_is_only_information():
    """nvidia-smi pasted while the reporter's own job ran (no out-of-memory in the text): not a warning."""
    r = CliRunner().invoke(cli, ["check", "--from-text", "-", "--format", "json"], input=HEADLESS_SMI.split("\n", 2)[2])
    found = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "gpu-memory-occupied"]
    assert [f["severity"] for f in found] == ["info"], found


def test_a_pasted_busy_gpu_beside_torchs_figures_of_its_own_memory_is_only_information():
    """The out-of-memory figures say the failing process held the memory itself: the busy table shows that process."""
    text = (
        OOM_22_OWN.replace("23.69 GiB", "11.92 GiB")
        .replace("7.09 GiB is free", "0 bytes is free")
        .replace("16.33 GiB memory in use", "11.50 GiB memory in use")
    )
    r = CliRunner().invoke(
        cli, ["check", "--from-text", "-", "--format", "json"], input=text + "\n\n" + HEADLESS_SMI.split("\n", 2)[2]
    )
    found = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "gpu-memory-occupied"]
    assert [f["severity"] for f in found] == ["info"], found
