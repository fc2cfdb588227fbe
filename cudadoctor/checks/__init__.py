"""Built-in checks, one module per area. Each module exposes ``register()`` returning its checks.

The built-ins are listed here, in the package (as pytest lists its built-in plugins), so they load
from a plain checkout as well as from an install. The ``cudadoctor.checks`` entry-point group is for
third-party plugins only (docs/plugins.md).
"""

BUILTIN_MODULES = (
    "arch",
    "builds",
    "codes5",
    "companions",
    "cont6",
    "driver",
    "driver_compat",
    "ext6",
    "extensions",
    "gpu_state",
    "health",
    "import_speed",
    "jit",
    "kernel_driver",
    "learned",
    "libraries",
    "platform",
    "platform2",
    "system_libs",
    "probes",
    "text_classes",
    "torch_install",
    "torch_package",
    "wsl",
    "gpuid9",
    "plat10",
    "cont13",
    "gcc16",
    "spaces16",
    "trt16",
    "fp16_17",
    "cufft18",
    "wslctk18",
    "dist18",
    "jetson18",
    "build18",
    "watchdog19",
    "libtorch19",
    "windows19",
    "fp8_19",
)
