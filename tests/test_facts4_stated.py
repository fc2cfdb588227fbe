"""Issue 21, facts area (round 4): conclusions from facts a report states but no sentence rule reads.

Every text here is real, from a public thread (URL beside it). A rule written from a blind batch's case is held
here to texts from other threads; the blind batches themselves are scored by test_blind_batches.
"""

from __future__ import annotations

from cudadoctor import registry
from cudadoctor.checks.driver import stated_values
from cudadoctor.checks.text_classes import legacy_branch
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)


def _got(text: str = "", **sections):
    facts = new_facts("collect_env")
    if text:
        facts["user_error"] = {"text": text}
    for k, v in sections.items():
        facts[k] = v
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


# ---------------------------------------------------------------- visibility variables as a text states them

# https://github.com/pytorch/pytorch/issues/1504 (b16-11: brackets are not CUDA's syntax; no GPU was visible)
PT_1504 = (
    "RuntimeError: CUDNN_STATUS_INTERNAL_ERROR\n"
    "Pytorch is giving CUDNN_STATUS_INTERNAL_ERROR when I try to run my program with gpu_id 0 and "
    "CUDA_VISIBLE_DEVICES=[1,2,3]. I was running it this way because GPU 0 was fully occupied."
)
# https://github.com/thewintersun/distributeTensorflowExample/issues/1 (an empty value: every GPU hidden)
TF_EMPTY = (
    "CUDA_VISIBLE_DEVICES='' python distribute.py --ps_hosts=192.168.100.42:2222 "
    "--worker_hosts=192.168.100.42:2224,192.168.100.253:2225 --job_name=ps --task_index=0"
)
# https://github.com/mmartial/ComfyUI-Nvidia-Docker/issues/104 (b16-24: the init script sets it to void)
COMFY_104 = (
    "NVIDIA_VISIBLE_DEVICES forcibly set to void by init script, causing CUDA initialization failure\n"
    "The container's initialization script (`comfyui-nvidia_init.bash`) systematically overwrites "
    "`NVIDIA_VISIBLE_DEVICES` to `void`, making the GPU inaccessible to ComfyUI"
)
# https://github.com/TaterTotterson/microWakeWord-Trainer-Nvidia-Docker/issues/29 (all: a valid value)
WAKEWORD_29 = (
    "its running on cpu , how can i enable cuda.  i already used docker.\n"
    'docker run -d --gpus all --shm-size 1g -e NVIDIA_VISIBLE_DEVICES=all -p 8888:8888 -v "%cd%:/data" '
    "ghcr.io/tatertotterson/microwakeword:latest"
)
# https://github.com/thuml/Autoformer/issues/25 (a valid index; whether it exists needs the GPU count)
AUTOFORMER_25 = "This is due to the bash files containing\nexport CUDA_VISIBLE_DEVICES=1"


def test_stated_values_read_assignments_and_sentences():
    assert stated_values(PT_1504, "CUDA_VISIBLE_DEVICES") == ["[1,2,3]"]
    assert stated_values(TF_EMPTY, "CUDA_VISIBLE_DEVICES") == [""]
    assert stated_values(COMFY_104, "NVIDIA_VISIBLE_DEVICES") == ["void", "void"]
    assert stated_values(WAKEWORD_29, "NVIDIA_VISIBLE_DEVICES") == ["all"]
    assert stated_values('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "CUDA_VISIBLE_DEVICES") == ["0"]


def test_placeholders_and_words_are_no_values():
    # READMEs and help texts (public repositories) write placeholders where the value goes
    for text in (
        "export CUDA_VISIBLE_DEVICES=[n]",
        "CUDA_VISIBLE_DEVICES=[GPUs to USE] python cifar_cnnedge.py",
        "CUDA_VISIBLE_DEVICES=$GPU_ID python train.py",
        "set CUDA_VISIBLE_DEVICES to the MIG slice's UUID before starting",
        "--env.CUDA_VISIBLE_DEVICES=[DEVICE_IDS] (will be discussed in the next section)",
    ):
        assert stated_values(text, "CUDA_VISIBLE_DEVICES") == [], text


def test_unparsable_or_empty_value_in_the_text_is_no_gpu_visible():
    got = _got(PT_1504)
    assert "no-gpu-visible" in got and got["no-gpu-visible"].severity == "error"
    assert got["no-gpu-visible"].evidence["CUDA_VISIBLE_DEVICES"] == "[1,2,3]"
    assert "no-gpu-visible" in _got(TF_EMPTY)


def test_void_container_variable_in_the_text_is_no_gpu_visible():
    got = _got(
        COMFY_104,
        nvml={"status": "ok", "driver_version": "570.195.03", "devices": [{"index": 0, "name": "NVIDIA GeForce RTX 4060 Ti"}]},
    )
    assert "no-gpu-visible" in got
    assert got["no-gpu-visible"].evidence["NVIDIA_VISIBLE_DEVICES"] == "void"


def test_valid_values_in_the_text_hide_nothing_by_themselves():
    assert "no-gpu-visible" not in _got(WAKEWORD_29)
    assert "no-gpu-visible" not in _got(AUTOFORMER_25)  # an index: only the GPU count can show it is past the end


# ---------------------------------------------------------------- driver branch x GPU generation


def test_legacy_branch_table():
    assert legacy_branch("3.0")["last"] == "470" and legacy_branch("3.7")["dropped_in"] == "495"
    assert legacy_branch("2.1")["last"] == "390"
    assert legacy_branch("6.1")["last"] == "580"
    assert legacy_branch("7.5") is None and legacy_branch("8.6") is None
    assert legacy_branch("7.2") is None  # Jetson Xavier: JetPack's driver


def _gpu_facts(name: str, driver: str, **torch):
    return {"nvml": {"status": "ok", "driver_version": driver, "devices": [{"index": 0, "name": name}]}, "torch": torch}


def test_kepler_with_a_newer_branch_needs_the_470_legacy_driver():
    # https://github.com/linuxmint/mintdrivers/issues/111 (b16-23: GTX 760 given 535, ignored at boot)
    got = _got(**_gpu_facts("NVIDIA GeForce GTX 760", "535"))
    assert got["gpu-needs-legacy-driver"].evidence["legacy_branch"] == "470"
    # a datacenter Kepler (Tesla K80, GK210, on NVIDIA's 470.xx legacy list) with a 525 driver: the same table
    # decides it (constructed facts, not a thread; the driver's own words for the class are tested in text_classes)
    got = _got(**_gpu_facts("Tesla K80", "525.85.12"))
    assert got["gpu-needs-legacy-driver"].evidence["legacy_branch"] == "470"


def test_supported_pairs_and_working_cuda_are_not_legacy():
    assert "gpu-needs-legacy-driver" not in _got(**_gpu_facts("NVIDIA GeForce GTX 760", "470.223.02"))
    assert "gpu-needs-legacy-driver" not in _got(**_gpu_facts("NVIDIA GeForce GTX 1080", "575.64"))
    assert "gpu-needs-legacy-driver" not in _got(**_gpu_facts("NVIDIA GeForce RTX 3090", "595.10"))
    # torch ran CUDA on it: the driver drives it, whatever the table says
    assert "gpu-needs-legacy-driver" not in _got(**_gpu_facts("Tesla K80", "525.85.12", cuda_available=True))


# ---------------------------------------------------------------- memory held by processes that outlived their program

# https://github.com/nanoporetech/bonito/issues/54 (b17-16)
BONITO_54 = (
    "Hey Chris, just wanted to let you know that failed / canceled `Bonito` runs appear to not reset the memory on our "
    "GPUs (Tesla V100, 440.64.00, CUDA: 10.2) and run as `PID`s that are not visible on `nvidia-smi`\n"
    "I usually check with `lsof /dev/nvidia0` and kill them"
)
# https://github.com/PaddlePaddle/PaddleOCR/issues/2074 (another thread, another tool: fuser)
PADDLE_2074 = "nvidia-smi只能看到显存占用，底下看不到这张卡里有进程\nfuser -v /dev/nvidia* 用这个能看到具体进程，kill了所有进程之后显存会释放"
# https://github.com/pytorch/pytorch/issues/8805 (b17-17: the contracted wording)
PT_8805 = (
    "After trying to terminate the main process, the children processes created by dataloader\n"
    "didn't exit and gpu memory wasn't released."
)
# https://github.com/apache/mxnet/issues/4242 (a zombie parent keeps the memory)
MXNET_4242 = "I just find the parent process becomes a zombie process which keeps occupying the GPU memory."
# https://github.com/pytorch/pytorch/issues/1223
PT_1223 = 'the main process remained to be "python [defunct]" that cannot be killed even by sudo kill -s 9.'
# https://github.com/wandb/wandb/issues/1247
WANDB_1247 = "After the process finishes, nothing appears in nvidia-smi **but the memory is being used as if the process was still running**."
# https://github.com/nianticlabs/monodepth2/issues/236 (torch's own figures: this process held the memory)
MONODEPTH_236 = (
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; "
    "2.81 GiB already allocated; 25.38 MiB free; 3.06 GiB reserved in total by PyTorch)"
)


def test_leftover_processes_in_any_words_are_gpu_memory_occupied():
    for text in (BONITO_54, PADDLE_2074, PT_8805, MXNET_4242, PT_1223, WANDB_1247):
        got = _got(text)
        assert "gpu-memory-occupied" in got, text
        assert got["gpu-memory-occupied"].severity == "warning"


def test_nvidia_smi_no_processes_alone_is_not_occupied():
    # https://github.com/NVIDIA/nvidia-docker/issues (b17-19's title, a healthy report): nvidia-smi's normal output
    assert "gpu-memory-occupied" not in _got("Docker run with --gpus 1 but -nvidia-smi with no processes found")


# ---------------------------------------------------------------- a bare Bus error: /dev/shm full

# https://github.com/pytorch/pytorch/issues/5247 (b17-54)
PT_5247 = 'Running out of space on /dev/shm leads to a "Bus error" that dumps core inside of `THTensor_(rawCopy)`'
# https://github.com/facebookresearch/PyTorch-BigGraph/issues/33 (the bare message at the end of a log)
BIGGRAPH_33 = (
    "2019-04-16 11:58:14  Creating workers...\n2019-04-16 11:58:14  Initializing global model...\nBus error (core dumped)"
)
# https://github.com/tahoebio/tahoe-x1/pull/63
TAHOE_63 = "PyTorch's DataLoader previously crashed with Bus error / No space left on device due to Docker's default /dev/shm limit (64 MB)."


def test_bus_error_is_shm_exhausted():
    for text in (PT_5247, BIGGRAPH_33, TAHOE_63):
        assert "shm-exhausted" in _got(text), text


def test_bus_error_inside_a_sentence_about_something_else_is_not():
    assert "shm-exhausted" not in _got("The kernel reported a machine check; lspci shows the PCIe bus errors corrected.")


# ---------------------------------------------------------------- the program's own log says it runs on the CPU

# https://github.com/OpenBMB/VoxCPM/issues/35 (b17-35)
VOXCPM_35 = "D:\\ai4\\VoxCPM>python app.py\n🚀 Running on device: cpu\n本机是NVIDIA Quadro RTX 4000显卡"
# https://pytorch.org/tutorials/beginner/basics/quickstart_tutorial.html (print(f"Using {device} device"))
QUICKSTART = "Using cpu device\nNeuralNetwork(\n  (flatten): Flatten(start_dim=1, end_dim=-1)"


def test_program_log_running_on_cpu_is_a_cpu_build_warning():
    for text in (VOXCPM_35, QUICKSTART):
        got = _got(text)
        assert got["cpu-only-torch"].severity == "warning", text


def test_bus_error_in_running_prose_is_not_the_bare_message():
    # a sentence that goes on after "bus error" (lower case) is not the process's last word
    assert "shm-exhausted" not in _got("the card throws a bus error when the riser cable is loose")


# ---------------------------------------------------------------- torch X from pip vs the CUDA the machine has


def _stated(torch_version: str, cuda: str, **extra):
    facts = new_facts("collect_env")
    facts["torch"] = {"version": torch_version, "status": "ok", "cuda": None, "cuda_available": False}
    facts["toolkit"] = {"nvcc_version": cuda}
    facts.update(extra)
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


def test_pip_build_newer_than_the_stated_cuda_is_a_likely_old_driver():
    # https://github.com/huggingface/sentence-transformers/issues/339 (b16-18: torch 1.5.0, "CUDA version 10.0")
    got = _stated("1.5.0", "10.0")
    assert got["driver-too-old"].severity == "warning"
    assert got["driver-too-old"].evidence["pip's build of this release"] == "CUDA 10.2"
    # the same class on other releases: torch 1.4.0 (pip: CUDA 10.1) on a CUDA 9.2 machine; 2.1.0 (cu121) on 10.2
    assert "driver-too-old" in _stated("1.4.0", "9.2")
    assert "driver-too-old" in _stated("2.1.0", "10.2")


def test_no_likely_old_driver_where_the_facts_settle_it():
    assert "driver-too-old" not in _stated("1.5.0", "10.2")  # the stated CUDA is the build's
    assert "driver-too-old" not in _stated("2.1.0", "11.8")  # 11.x and later: minor-version compatibility
    assert "driver-too-old" not in _stated("1.5.0+cu92", "9.2")  # the build is shown
    got = _stated("1.5.0", "10.0", nvml={"status": "ok", "driver_version": "410.48"})
    assert "Likely" not in getattr(got.get("driver-too-old"), "title", "")  # a driver version: the table decides
