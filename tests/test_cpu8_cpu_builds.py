"""Task cpu8 (issue 21, round 8): evidence that the torch (or a companion) in use is a CPU-only build, read from a
person's or a program's words (kb/errors/cpu8.json), and its priority over an architecture guess (checks/arch.py).

Every text is a real thread's (URL beside it), none from the blind batches; the rows were written from b19/b23 cases
and are checked here on other threads, on texts where they must stay quiet (another vendor's GPU, a CPU BLAS, a
program's advice), and the arch priority on a Blackwell GPU named beside a CPU build."""

from __future__ import annotations

from checkcli import codes, paste_findings, severities


def test_program_log_device_cpu_on_windows_with_an_nvidia_gpu(tmp_path):
    # https://github.com/hkchengrex/Cutie/issues/81 (the maintainer asked for torch.cuda.is_available())
    text = (
        "why my using device is cpu?\n"
        " I've got NVidia 4090 and setup all the requirements include cuda,pytorch etc.   \n"
        "My system is windows 11. This is the message:\n"
        "E:\\XMem2\\Cutie\\Cutie>python interactive_demo.py --video ./examples/6.mp4 --num_objects 3\n"
        "Using device: cpu\nSingle object: False\nWorkspace is in: ./workspace\\6\n5397 images found.\n"
    )
    got = paste_findings(tmp_path, text)
    assert "cpu-only-torch" in codes(got)
    assert severities(got)["cpu-only-torch"] == "warning"  # a hypothesis: the program chose the CPU


def test_advice_to_use_device_cpu_on_a_radeon_is_not_a_cpu_build(tmp_path):
    # https://github.com/ogkalu2/comic-translate/issues/210: ultralytics' advice "Use 'device=cpu'", an AMD GPU
    text = (
        "Radeon GPU and Cuda incompatibility\n"
        "Is there any way I could possibly utilize this application with pytorch instead using my cpu? Or do I need a "
        "nvidia GPU to use this application?\n"
        "ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if available, "
        "i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n"
        "torch.cuda.is_available(): False\ntorch.cuda.device_count(): 0\n"
    )
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, text))


def test_textgen_no_gpu_detected_on_windows(tmp_path):
    # https://github.com/oobabooga/textgen/issues/310 (the same message in #133, fixed by reinstalling torch)
    text = (
        "No GPU Detected on 4080\n"
        "F:\\text-generation-webui>python server.py --model llama-7b-hf --load-in-8bit\n"
        "Loading llama-7b-hf...\nWarning: no GPU has been detected.\nFalling back to CPU mode.\n"
        "### System Info\nWindows 10\nGigabyte RTX 4080\n"
    )
    got = paste_findings(tmp_path, text)
    assert "cpu-only-torch" in codes(got)
    assert severities(got)["cpu-only-torch"] == "warning"


def test_textgen_no_gpu_detected_with_only_a_windows_path(tmp_path):
    # https://github.com/oobabooga/textgen/issues/310, its log alone: no OS stated, but the prompt is a drive-letter path
    text = (
        "F:\\text-generation-webui>python server.py --model llama-7b-hf --load-in-8bit\n"
        "Loading llama-7b-hf...\nWarning: no GPU has been detected.\nFalling back to CPU mode.\n"
    )
    assert "cpu-only-torch" in codes(paste_findings(tmp_path, text))
    # the same log from a Linux prompt: the driver is as likely as the build, so nothing is proposed
    linux = text.replace("F:\\text-generation-webui>", "user@host:~/text-generation-webui$ ")
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, linux))


def test_no_gpu_detected_with_an_amd_gpu_is_not_a_cpu_build(tmp_path):
    # https://github.com/oobabooga/textgen/issues/151: the same message from a Radeon on Windows
    text = (
        'no GPU has been detected\nHello i keep getting "no GPU has been detected"\n'
        "I'm running this on win10 with a AMD 6900 GPU\n"
        "from the other issues i read ROCm doesn't seam to be supported on windows.\n"
    )
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, text))


def test_llama_cpp_blas_0_beside_a_gpu_is_a_cpu_build_of_llama_cpp_python(tmp_path):
    # https://github.com/abetlen/llama-cpp-python/issues/300 (title and system-info line)
    text = (
        "Trying to use GPU, but BLAS = 0 (tried anything i can found)\n"
        'llm = Llama(model_path="./models/model_ggml.bin", n_ctx=1024, n_threads=8, n_gpu_layers=10, verbose=True)\n'
        "AVX = 1 | AVX2 = 1 | AVX512 = 0 | AVX512_VBMI = 0 | AVX512_VNNI = 0 | FMA = 1 | NEON = 0 | ARM_FMA = 0 | "
        "F16C = 1 | FP16_VA = 0 | WASM_SIMD = 0 | BLAS = 0 | SSE3 = 1 | VSX = 0 |\n"
    )
    got = paste_findings(tmp_path, text)
    assert codes(got)[:1] == ["companion-cpu-only-build"]
    assert "llama-cpp-python" in next(f["title"] for f in got if f["code"] == "companion-cpu-only-build")


def test_blas_0_about_openblas_only_is_not_a_gpu_question(tmp_path):
    # https://github.com/abetlen/llama-cpp-python/issues/357: a CPU BLAS (OpenBLAS) not found; no GPU is meant
    text = 'After installing with CMAKE_ARGS="-DLLAMA_OPENBLAS=on" FORCE_CMAKE=1, BLAS = 0 on model load\n'
    assert "companion-cpu-only-build" not in codes(paste_findings(tmp_path, text))


def test_a_cpu_build_named_beats_the_blackwell_arch_guess(tmp_path):
    # https://github.com/tenstorrent/tt-inference-server/pull/290's sentence beside a Blackwell GPU's name: the torch
    # the text names has no CUDA code at all, so the GPU's architecture cannot be the reason (without the sentence,
    # the arch check's "runs only with the newest builds" guess stands).
    gpu = "GPU: NVIDIA GeForce RTX 5090\nimport torch fails to use the GPU\n"
    assert "gpu-arch-unsupported" in codes(paste_findings(tmp_path, gpu))
    got = paste_findings(tmp_path, "Make sure to install torch for cpu\n" + gpu)
    assert "cpu-only-torch" in codes(got)
    assert "gpu-arch-unsupported" not in codes(got)


def test_words_for_a_cpu_build(tmp_path):
    # https://github.com/tenstorrent/tt-inference-server/pull/290 and https://github.com/NaxAlpha/gpt-2xy/issues/6:
    # "torch for cpu" / "`torch cpu`" name the build; "torch CPU usage" names a load, not a build.
    said = paste_findings(tmp_path, "Make sure to install torch for cpu\nI have an NVIDIA GeForce RTX 3060\n")
    assert "cpu-only-torch" in codes(said)
    usage = paste_findings(tmp_path, "torch CPU usage is 100% while training\nI have an NVIDIA GeForce RTX 3060\n")
    assert "cpu-only-torch" not in codes(usage)


def test_cpu_build_words_on_a_mac_are_not_a_fault(tmp_path):
    # A CPU torch on a Mac is the right build (no NVIDIA GPU there): nothing, or at most no error
    text = "Make sure to install torch for cpu\nmacOS 14.4 on an Apple M2\n"
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, text), ("error",))
