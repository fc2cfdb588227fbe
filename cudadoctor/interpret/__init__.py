"""Facts -> meanings: the one place that interprets a facts document.

Checks, diff, fleet, triage and devices read facts through these functions instead of parsing
version strings, wheel tags or GPU records themselves:

* :mod:`.versions` - version strings (the one parser), wheel tags and CUDA/variant names;
* :mod:`.build` - the torch build: version, variant, CUDA it was built with, arch list, kind;
* :mod:`.gpus` - GPUs (name, compute capability and where it came from), driver, kernel module;
* :mod:`.environment` - live / container / WSL / collect_env / file, OS, installer, library paths.

Everything is pure (facts and the kb in, values out) and answers None for unknown: a value of the
wrong type or an unparsable one reads as unknown, never as a crash.
"""

from .build import (
    arch_bound,
    arch_number,
    newer_than_all,
    build_arch_list,
    build_kind,
    dist_version,
    imported_variant,
    is_cuda_build,
    torch_cuda,
    torch_release,
    torch_version,
    variant,
)
from .environment import (
    Environment,
    conda_torch,
    container,
    cuda_like_dir,
    driver_os,
    environment,
    in_conda_env,
    installer,
    is_wsl,
    ld_library_path,
    ld_preload,
    loaded_libraries,
    os_family,
    os_key,
    wsl1_build,
    os_known,
    platform_key,
    situation,
    split_path_var,
    wanted_companions,
)
from .gpus import (
    arch_runs,
    cap_number,
    cap_str,
    cores_per_sm,
    driver_version,
    gpus,
    kernel_module,
    no_gpu_stated,
    nvidia_gpu_present,
)
from .versions import (
    cuda_of_variant,
    decode_cudnn,
    fmt_cudnn,
    local_tag,
    mm,
    mm_str,
    release_of,
    rocm_of_variant,
    variant_of_cuda,
    variant_of_tag,
    vtuple,
)

__all__ = [
    "arch_bound",
    "arch_number",
    "newer_than_all",
    "build_arch_list",
    "build_kind",
    "dist_version",
    "imported_variant",
    "is_cuda_build",
    "torch_cuda",
    "torch_release",
    "torch_version",
    "variant",
    "Environment",
    "conda_torch",
    "container",
    "cuda_like_dir",
    "driver_os",
    "environment",
    "in_conda_env",
    "installer",
    "is_wsl",
    "ld_library_path",
    "ld_preload",
    "loaded_libraries",
    "os_family",
    "os_key",
    "wsl1_build",
    "os_known",
    "platform_key",
    "situation",
    "split_path_var",
    "wanted_companions",
    "arch_runs",
    "cap_number",
    "cap_str",
    "cores_per_sm",
    "driver_version",
    "gpus",
    "kernel_module",
    "no_gpu_stated",
    "nvidia_gpu_present",
    "cuda_of_variant",
    "decode_cudnn",
    "fmt_cudnn",
    "local_tag",
    "mm",
    "mm_str",
    "release_of",
    "rocm_of_variant",
    "variant_of_cuda",
    "variant_of_tag",
    "vtuple",
]
