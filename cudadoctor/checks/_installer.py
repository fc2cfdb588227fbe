"""Install commands in the terms of the installer that manages the environment. Pure: facts + kb.

Fix planning (``_fixes.py``) decides *what* to install: torch release R built for variant V, with
its paired companions. This layer decides *how*, from what the pyenv probe recorded
(``python.manager``: pyvenv.cfg's ``uv`` key, conda-meta records, the EXTERNALLY-MANAGED marker, a
uv project) and the INSTALLER of torch's metadata:

========================  ======================================================================
manager                   command
========================  ======================================================================
``pip``                   ``python -m pip install torch==R ... --index-url .../whl/V`` (_fixes.py)
``pip-system-managed``    an OS-managed Python (PEP 668): a venv first, then pip inside it
``conda``                 torch is conda's: conda-forge's ``pytorch-gpu``/``pytorch-cpu`` (the
                          PyTorch channel only for releases it published, up to 2.5: _fixes.py)
``conda-pip``             a conda env whose torch came from pip: pip inside it (_fixes.py)
``uv-project``            a uv project's own environment: ``uv add`` with the variant's index
                          (``[[tool.uv.index]]`` + ``[tool.uv.sources]``), so ``uv sync`` keeps it
``uv-venv``               a venv uv made, or torch that ``uv pip`` installed: ``uv pip install``
========================  ======================================================================

``_fixes.py`` imports this module, never the reverse (the companion pins both write,
:func:`companion_pin`, live here). Where each build is published is kb/installers.json (sources and
date there). The other fix
commands the checks write as ``python -m pip ...`` are rewritten for the same manager by
:func:`adapt_commands` (applied to every built-in finding by report.diagnose).
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret import conda_torch, mm, os_key, vtuple

from ._common import kb

PIP_LIKE = ("pip", "conda-pip")


def _table() -> Dict:
    k = kb()
    try:
        return k._load("installers") if k else {}
    except Exception:
        return {}


def _torch_installer(fx: Facts) -> Optional[str]:
    for d in fx.dicts("packages.distributions"):
        if str(d.get("name", "")).lower() in ("torch", "pytorch"):
            inst = d.get("installer")
            return str(inst).lower() if inst else None
    return None


def manager(fx: Facts) -> str:
    """How this environment is managed (see the table above); 'pip' when nothing says otherwise."""
    if conda_torch(fx):
        return "conda"
    if fx.bool("python.conda") or fx.dict("python.manager.conda_packages"):
        return "conda-pip"  # a conda env, torch from pip: pip is what this env already does
    project = fx.dict("python.manager.uv_project") or {}
    if project.get("is_this_env") and (project.get("lock") or project.get("tool_uv")):
        return "uv-project"
    if fx.str("python.manager.uv") or _torch_installer(fx) == "uv":
        return "uv-venv"
    if fx.bool("python.manager.externally_managed") and not fx.bool("python.venv"):
        return "pip-system-managed"
    return "pip"


def companion_pin(name: str, release: Optional[str]) -> str:
    """'torchvision==0.21.0' for the release (series pins as '==0.21.*'); bare name when unknown."""
    r = kb().torch_release(release) if release else None
    ver = r.get(name) if r else None
    if not ver:
        return name
    return f"{name}=={ver}" if len(vtuple(ver) or ()) >= 3 else f"{name}=={ver}.*"


def _pins(release: Optional[str], companions: Sequence[str], sep: str = "==") -> List[str]:
    out = [f"torch{sep}{release}" if release else "torch"]
    for c in companions:
        pin = companion_pin(c, release)
        out.append(pin.replace("==", sep, 1) if sep != "==" else pin)
    return out


def _q(spec: str) -> str:
    return f'"{spec}"' if any(ch in spec for ch in "<>*| ") else spec  # what a shell would misread


def uv_project_commands(fx: Facts, release: Optional[str], variant: Optional[str], companions: Sequence[str]) -> List[str]:
    """``uv add`` pinned to the variant's PyTorch index: uv writes the index and the sources."""
    t = _table().get("uv") or {}
    pins = " ".join(_q(p) for p in _pins(release, companions))
    if not variant:
        return [f"uv add {pins}"]
    name = str(t.get("index_name", "pytorch-{variant}")).format(variant=variant)
    url = str(t.get("index", "https://download.pytorch.org/whl/{variant}")).format(variant=variant)
    return [
        f"uv add {pins} --index {name}={url}  # writes [[tool.uv.index]] {name} and pins torch to it in [tool.uv.sources]",
        "uv sync  # the project's environment now matches uv.lock",
    ]


def uv_pip_commands(pip_command: str) -> List[str]:
    """The pip command of _fixes.pip_install, run by uv pip (same arguments; uv says --reinstall)."""
    cmd = pip_command.replace("python -m pip install", "uv pip install", 1).replace("--force-reinstall", "--reinstall")
    return [cmd]


_SUBDIRS = re.compile(r"^(noarch|(linux|win|osx|emscripten|wasi|zos)-[\w]+)$")


def _channel_name(channel: str) -> str:
    """'https://conda.anaconda.org/conda-forge/linux-64' -> 'conda-forge'; 'pytorch' -> 'pytorch';
    'https://repo.anaconda.com/pkgs/main/linux-64' -> 'pkgs/main' (the URL less its host and subdir)."""
    c = channel.strip().rstrip("/")
    if "://" in c:
        c = c.split("://", 1)[1].split("/", 1)[1] if "/" in c.split("://", 1)[1] else ""
    parts = [p for p in c.split("/") if p]
    if parts and _SUBDIRS.match(parts[-1]):
        parts = parts[:-1]
    return "/".join(parts) or channel


def _conda_record(fx: Facts, name: str) -> Optional[Dict]:
    """conda's record of package ``name`` here: conda-meta (the probe), else a pasted conda list's row."""
    rec = fx.dict(f"python.manager.conda_packages.{name}")
    if rec:
        return rec
    for d in fx.dicts("packages.distributions"):
        if str(d.get("installer") or "").lower() != "conda":
            continue
        if str(d.get("package") or d.get("name") or "").lower() == name:
            return d
    return None


def conda_installed(fx: Facts, name: str) -> Optional[bool]:
    """True when conda's records list ``name``; False only where the pyenv probe read conda-meta (it
    records every torch selector: pytorch-cpu, pytorch-gpu, cpuonly...); None otherwise (collect_env's
    conda lines and a grepped conda list leave packages out)."""
    if _conda_record(fx, name):
        return True
    return False if fx.dict("python.manager.conda_packages") else None


def torch_channel(fx: Facts) -> Optional[str]:
    """The channel conda's torch came from ('conda-forge', 'pytorch', 'pkgs/main'...): conda-meta's
    record or the conda list's channel column; else what its build string says (kb/installers.json:
    each channel's build strings); None when nothing says."""
    rec: Dict = {}
    for name in ("pytorch", "pytorch-gpu", "pytorch-cpu"):
        rec = _conda_record(fx, name) or {}
        if rec:
            break
    channel = rec.get("channel")
    if isinstance(channel, str) and channel.strip():
        return _channel_name(channel)
    build = str(rec.get("build") or "")
    for chan, patterns in ((_table().get("conda_channels") or {}).get("build_patterns") or {}).items():
        if build and any(re.match(p, build) for p in patterns):
            return str(chan)
    return None


def conda_forge_commands(
    fx: Facts, release: Optional[str], variant: Optional[str], companions: Sequence[str]
) -> Optional[List[str]]:
    """conda-forge's build of the release: pytorch-gpu (CUDA, limited to the variant's CUDA) or pytorch-cpu.

    The other selector (pytorch-cpu when the CUDA build is wanted, and the reverse) and the PyTorch
    channel's cpuonly are removed first where conda's list has them: each pins the build it names
    (conda-forge's pytorch builds constrain the other selector to a version that does not exist)."""
    t = _table().get("conda_forge") or {}
    if variant and variant != "cpu" and os_key(fx) not in (t.get("cuda_os") or ["linux"]):
        return None  # no conda-forge CUDA build assumed here: pip inside the env
    series = ".".join(release.split(".")[:2]) if release else None
    cpu_pkg, gpu_pkg = str(t.get("cpu_package", "pytorch-cpu")), str(t.get("gpu_package", "pytorch-gpu"))
    pkg = cpu_pkg if variant == "cpu" else gpu_pkg
    specs = [f"{pkg}={series}" if series else pkg]
    for c in companions:  # conda-forge builds of the paired series (its patch numbering may differ)
        pin = companion_pin(c, release)
        specs.append(c + "=" + ".".join(pin.split("==", 1)[1].split(".")[:2]) if "==" in pin else pin)
    if variant and variant.startswith("cu") and variant[2:].isdigit():
        cuda = f"{variant[2:-1]}.{variant[-1]}"
        specs.append(f"{t.get('cuda_pin', 'cuda-version')}<={cuda}")
    chan = t.get("channel", "conda-forge")
    cmds = [f"conda install -c {chan} " + " ".join(_q(s) for s in specs)]
    channel = torch_channel(fx)
    pins = [n for n in ((gpu_pkg if pkg == cpu_pkg else cpu_pkg), "cpuonly") if conda_installed(fx, n)]
    if pins:
        cmds.insert(0, f"conda remove --force {' '.join(pins)}  # it pins the other build")
    if channel and channel != chan and _conda_record(fx, "pytorch"):
        cmds.insert(
            0,
            f"conda remove --force {' '.join(['pytorch', *companions])}  # from the {channel} channel; conda-forge's build replaces it",
        )
    return cmds


def pytorch_channel_cuda(release: Optional[str], variant: Optional[str]) -> Optional[Tuple[str, bool]]:
    """(CUDA version, whether its cudatoolkit comes from conda-forge) of the PyTorch conda channel's
    build of ``release`` closest to the wheel variant ``variant`` without exceeding its CUDA (the
    driver runs that); None when the channel published no such build (kb/installers.json)."""
    t = _table().get("conda_pytorch_channel") or {}
    r = mm(release) if release else None
    if not (r and variant and variant.startswith("cu") and variant[2:].isdigit()):
        return None
    table = t.get("cuda") or {}
    entry = table.get(str(release)) or table.get(f"{r[0]}.{r[1]}") or {}
    want = (int(variant[2:-1]), int(variant[-1]))
    ok = [c for c in entry.get("cuda") or [] if (mm(c) or (99, 0)) <= want]
    if not ok:
        return None
    best = max(ok, key=lambda c: mm(c) or (0, 0))
    return best, best in (entry.get("conda_forge") or [])


def pytorch_channel_publishes(release: Optional[str], variant: Optional[str]) -> bool:
    t = _table().get("conda_pytorch_channel") or {}
    last = mm(str(t.get("last_series", "2.5")))
    r = mm(release) if release else None
    if not (r and last and r <= last and variant):
        return False
    return variant == "cpu" or pytorch_channel_cuda(release, variant) is not None


def install_for_manager(
    fx: Facts, release: Optional[str], variant: Optional[str], companions: Sequence[str], reinstall: bool, pip_command
) -> Optional[List[str]]:
    """Commands for the environment's manager, or None for pip's (planned by _fixes.install_commands).

    ``pip_command(release, variant, companions, reinstall)`` is _fixes.pip_install.
    """
    m = manager(fx)
    if m in PIP_LIKE:
        return None
    if m == "conda":
        channel = torch_channel(fx)
        if pytorch_channel_publishes(release, variant) and channel != "conda-forge":
            return None  # the PyTorch channel still has it: _fixes.py plans that (cpuonly only where listed)
        return conda_forge_commands(fx, release, variant, companions)
    if m == "uv-project":
        return uv_project_commands(fx, release, variant, companions)
    if m == "uv-venv":
        return uv_pip_commands(pip_command(release, variant, companions, reinstall))
    if m == "pip-system-managed":
        venv_py = ".venv\\Scripts\\python" if os_key(fx) == "windows" else ".venv/bin/python"
        return [
            "python3 -m venv .venv  # this Python's packages are managed by the OS (PEP 668): use a venv",
            pip_command(release, variant, companions, reinstall).replace("python -m pip", f"{venv_py} -m pip", 1),
        ]
    return None


# ---------------------------------------------------------------- every other fix command
#
# The checks write their non-torch commands (a cuDNN pin, numpy<2, an extension rebuild, an
# uninstall) as ``python -m pip ...``. adapt_commands() rewrites each such occurrence — at the start
# of a command, after env vars (``TORCH_CUDA_ARCH_LIST="9.0" python -m pip ...``) or inside a comment
# (``# or: python -m pip install ...``) — for the manager; report.diagnose applies it to the built-in
# findings, so no check writes installer-specific commands itself. What is already written for the
# manager (``uv ...``, ``.venv/bin/python -m pip``, ``conda ...``) is left alone.

_PIP_AT = re.compile(r"(?<![\w/\\.-])python -m pip (?=\S)")
_VALUED = {"--index-url", "-i", "--extra-index-url", "-f", "--find-links", "--no-binary", "--only-binary"}
_VALUED |= {"-r", "--requirement", "-c", "--constraint", "--format"}
_STOP = ("#", "|", ";", "&", ">", "2>", "(", ")")
_VARIANT = re.compile(r"^(cu\d+|cpu|rocm[\d.]+|xpu)$")


def _scan(text: str, i: int) -> Tuple[List[str], int]:
    """Shell words from ``i`` up to a comment, pipe, redirection or ``(``: (words, where they end).

    Quotes, ``$( ... )`` and ``<placeholder with spaces>`` stay inside one word."""
    words: List[str] = []
    end = i
    n = len(text)
    while True:
        while i < n and text[i] == " ":
            i += 1
        if i >= n or text.startswith(_STOP, i):
            return words, end
        j, depth, quote = i, 0, ""
        while j < n and (quote or depth or text[j] != " "):
            c = text[j]
            if quote:
                quote = "" if c == quote else quote
            elif c in "\"'":
                quote = c
            elif text.startswith("$(", j) or c == "<":
                depth += 1
            elif (c == ")" or c == ">") and depth:
                depth -= 1
            j += 1
        words.append(text[i:j])
        i = end = j


Opt = Tuple[str, Optional[str]]


class _PipArgs:
    """One pip command line: subcommand, then its words in order, each an option (name, value) or a spec."""

    def __init__(self, sub: str, words: Sequence[str]) -> None:
        self.sub = sub
        self.items: List[Tuple[Optional[Opt], str]] = []  # (option, "") or (None, spec)
        it = iter(words)
        for w in it:
            if not w.startswith("-"):
                self.items.append((None, w))
                continue
            k, eq, v = w.partition("=")
            if k in _VALUED and not (sub == "show" and k == "-f"):  # pip show -f: --files
                self.items.append(((k, v if eq else next(it, "")), ""))
            else:
                self.items.append(((w, None), ""))

    @property
    def specs(self) -> List[str]:
        return [s for o, s in self.items if o is None]

    @property
    def opts(self) -> List[Opt]:
        return [o for o, _ in self.items if o is not None]

    def has(self, *flags: str) -> bool:
        return any(k in flags for k, _ in self.opts)

    def value(self, *flags: str) -> Optional[str]:
        return next((v for k, v in self.opts if k in flags), None)

    def line(self, head: str, opt_map: Callable[[str, Optional[str]], List[Opt]], keep: Sequence[str] = ()) -> str:
        """``head`` + the words in their order, each option through ``opt_map`` ([] drops it), the specs
        in ``keep`` (all when empty)."""
        out = [head]
        for o, s in self.items:
            if o is None:
                out += [s] if not keep or s in keep else []
            else:
                for k, v in opt_map(*o):
                    out += [k] if v is None else [k, v]
        return " ".join(out)


def _name(spec: str) -> Optional[str]:
    """The normalised project name of a requirement ('Foo_Bar[x]==1' -> 'foo-bar'); None for a placeholder."""
    m = re.match(r"[\"']?([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return re.sub(r"[._]+", "-", m.group(1)).lower() if m else None


def _spec_names(specs: Sequence[str]) -> List[str]:
    return [n for n in (_name(s) for s in specs) if n]


def _reinstalled(commands: Sequence[str]) -> set:
    """Names a fix installs (pip install): an uninstall of one of them is the first half of a reinstall."""
    out: set = set()
    for c in commands:
        for m in _PIP_AT.finditer(c):
            words, _ = _scan(c, m.end())
            if words and words[0] == "install":
                out.update(_spec_names(_PipArgs("install", words[1:]).specs))
    return out


def _uv_pip(a: _PipArgs) -> str:
    """pip's arguments in uv pip's terms (uv pip uninstall has no -y; uv spells the cache and reinstall flags)."""
    ren = {"--force-reinstall": "--reinstall", "--no-cache-dir": "--no-cache", "-f": "--find-links"}
    drop = {"-y", "--yes"} | ({"-v", "--verbose"} if a.sub == "list" else set())  # uv's -v is its own log level

    def opt(k: str, v: Optional[str]) -> List[Opt]:
        if k in drop:
            return []
        if k == "--pre":
            return [("--prerelease", "allow")]
        if a.sub == "show" and k == "-f":
            return [("--files", None)]
        return [(ren.get(k, k), v)]

    return a.line(f"uv pip {a.sub}", opt)


def _index_option(url: str) -> str:
    """``--index NAME=URL`` for uv add: a named index is written to [[tool.uv.index]] and the packages
    added with it are pinned to it in [tool.uv.sources] (uv docs, kb/installers.json)."""
    t = _table().get("uv") or {}
    prefix = str(t.get("index", "https://download.pytorch.org/whl/{variant}")).split("{", 1)[0]
    tail = url[len(prefix) :].strip("/") if url.startswith(prefix) else ""
    if not tail or not re.fullmatch(r"[\w./-]+", tail):
        return f"--index {url}"  # a placeholder the user fills in: uv names it after its host
    name = str(t.get("index_name", "pytorch-{variant}")).format(variant=tail.replace("/", "-"))
    return f"--index {name}={url}"


def _uv_add(a: _PipArgs) -> str:
    """pip install in a uv project's terms: ``uv add`` records the requirement in pyproject.toml and
    uv.lock and syncs, so the next ``uv sync``/``uv run`` keeps it (a ``uv pip install`` it would undo).
    --force-reinstall is uv add's --reinstall-package for the named packages, applied by the sync uv add
    runs; --no-deps has no uv add equivalent (the lock resolves every dependency) and is dropped."""
    names = [_name(x) or x for x in a.specs]  # a placeholder (<that package>) stands for its name

    def opt(k: str, v: Optional[str]) -> List[Opt]:
        if k in ("--index-url", "-i", "--extra-index-url") and v:
            return [(_index_option(v), None)]
        if k in ("--force-reinstall", "--upgrade", "-U"):
            return [("--reinstall-package" if k == "--force-reinstall" else "--upgrade-package", n) for n in names]
        if k == "--no-cache-dir":
            return [("--no-cache", None)]
        if k == "--no-binary" and v:
            return [("--no-binary", None)] if v == ":all:" else [("--no-binary-package", p) for p in v.split(",")]
        if k == "--pre":
            return [("--prerelease", "allow")]
        return [] if k in ("--no-deps", "-y", "--yes") else [(k, v)]

    return a.line("uv add", opt)


def _uv_project(a: _PipArgs, reinstalled: set) -> str:
    if a.sub == "install":
        return _uv_add(a)
    if a.sub == "uninstall":
        names = _spec_names(a.specs)
        if names and set(names) <= reinstalled:
            # the first half of a reinstall: take it out of .venv now; the uv add after it installs the
            # locked version afresh (a sync installs what uv.lock lists and the environment lacks)
            return _uv_pip(a)
        # a removal: uv remove drops the requirement from pyproject.toml and uv.lock, and its exact sync
        # uninstalls it (uv pip uninstall alone would be undone by the next uv sync). uv remove refuses a
        # package that is not a direct dependency: then `uv tree --invert --package NAME` names who needs it.
        return "uv remove " + " ".join(a.specs)
    return _uv_pip(a)


def _conda_names() -> Dict[str, str]:
    return {str(k).lower(): str(v) for k, v in ((_table().get("conda_names") or {}).get("names") or {}).items()}


def _conda_owns(fx: Facts, name: str) -> bool:
    """conda installed this package here: its distribution says installer conda, or conda-meta lists it
    (names mapped pip -> conda by kb/installers.json). A copy pip or uv installed is pip's; a library that
    has a conda name but no pip copy here (nvidia-cudnn-cu12 -> cudnn) is the one conda's pytorch uses."""
    cname = _conda_names().get(name, name)
    dists = [d for d in fx.dicts("packages.distributions") if _name(str(d.get("name", ""))) in (name, cname)]
    installers = {str(d.get("installer") or "").lower() for d in dists}
    if installers - {"conda"}:
        return False  # pip's (or unknown): pip's command acts on pip's copy
    if "conda" in installers or cname in (fx.dict("python.manager.conda_packages") or {}):
        return True
    return name in _conda_names() and not dists


def _conda_spec(spec: str, names: Dict[str, str]) -> str:
    """'nvidia-cudnn-cu12==9.1.0.70' -> 'cudnn==9.1.0.70'; 'x==1.2.*' -> 'x=1.2' (conda's prefix match)."""
    bare = spec.strip("\"'")
    n = _name(bare) or bare
    rest = re.sub(r"^[A-Za-z0-9._-]+(\[[^\]]*\])?", "", bare)
    if rest.startswith("==") and rest.endswith(".*"):
        rest = "=" + rest[2:-2]
    return names.get(n, n) + rest if "$(" in rest else _q(names.get(n, n) + rest)


def _conda_torch(fx: Facts, a: _PipArgs, torch_spec: str, companions: List[str]) -> Optional[List[str]]:
    """torch from conda: conda-forge's build of the release/variant the pip command names."""
    from cudadoctor.interpret import variant

    m = re.match(r"torch==([\d.]+)(?:\+(\w+))?$", torch_spec.strip("\"'"))
    url = a.value("--index-url", "-i") or ""
    tail = url.rstrip("/").rsplit("/", 1)[-1] or (m.group(2) if m else None) or ""
    var = tail if _VARIANT.match(tail) else None if url else variant(fx)
    cmds = conda_forge_commands(fx, m.group(1) if m else None, var, companions)
    if cmds and a.has("--force-reinstall"):
        cmds[-1] = cmds[-1].replace("conda install ", "conda install --force-reinstall ", 1)
    return cmds


def _conda(fx: Facts, a: _PipArgs, reinstalled: set, env_prefix: bool) -> Optional[List[str]]:
    """The packages conda installed, with conda; the rest stay pip's. None: the line stays as it is."""
    if a.sub not in ("install", "uninstall") or env_prefix or a.has("--no-binary", "--no-build-isolation", "--pre"):
        return None  # reads, builds from source and nightlies (PyTorch's pip index only) are pip's
    ours = [s for s in a.specs if _name(s) and _conda_owns(fx, str(_name(s)))]
    if not ours:
        return None
    names = _conda_names()
    rest = [s for s in a.specs if s not in ours]
    out: List[str] = []
    chan = str((_table().get("conda_names") or {}).get("channel", "conda-forge"))
    if a.sub == "uninstall":
        cn = [names.get(str(_name(s)), str(_name(s))) for s in ours]
        force = "--force " if set(_spec_names(ours)) <= reinstalled else ""  # only it: the install after it puts it back
        out.append(f"conda remove {force}{' '.join(cn)}")
    else:
        torch = [s for s in ours if _name(s) == "torch" and re.fullmatch(r"torch(==[\d.]+(\+\w+)?)?", s.strip("\"'"))]
        comps = [s for s in ours if _name(s) in ("torchvision", "torchaudio")] if torch else []
        if torch:
            tc = _conda_torch(fx, a, torch[0], _spec_names(comps))
            if tc is None:
                return None  # no conda-forge build assumed here: pip inside the env, as _fixes plans
            out += tc
        other = [s for s in ours if s not in torch and s not in comps]
        if other:
            force = "--force-reinstall " if a.has("--force-reinstall") else ""
            out.append(f"conda install -c {chan} {force}" + " ".join(_conda_spec(s, names) for s in other))
    if rest:
        out.append(a.line(f"python -m pip {a.sub}", lambda k, v: [(k, v)], keep=rest))
    return out


def _torch_mixed(fx: Facts) -> bool:
    """torch in several copies, not all conda's (a pip torch beside conda's, or another copy on sys.path):
    the check's pip commands act on the pip copy Python imports, so they stay pip's."""
    torches = [d for d in fx.dicts("packages.distributions") if str(d.get("name", "")).lower() in ("torch", "pytorch")]
    installers = {str(d.get("installer") or "").lower() for d in torches}
    return len(fx.dicts("packages.torch_sources")) > 1 or (len(torches) > 1 and installers != {"conda"})


def _conda_fix(commands: Sequence[str]) -> bool:
    """A fix that already runs conda was written for conda by its check: its pip lines are deliberate
    (a package pip installed, pip inside the env after conda's channel stopped, pip as the alternative)."""
    return any(re.match(r"\s*conda (install|remove|create|update)\b", c.split("#", 1)[0]) for c in commands)


def _rewrite(fx: Facts, m: str, cmd: str, reinstalled: set) -> str:
    """Every ``python -m pip`` in one command, for manager ``m``."""
    out, pos = [], 0
    venv_py = ".venv\\Scripts\\python" if os_key(fx) == "windows" else ".venv/bin/python"
    for hit in _PIP_AT.finditer(cmd):
        if hit.start() < pos:
            continue
        words, end = _scan(cmd, hit.end())
        if not words:
            continue
        a = _PipArgs(words[0], words[1:])
        new: Optional[List[str]] = None
        if m == "uv-venv":
            new = [_uv_pip(a)]
        elif m == "uv-project":
            new = [_uv_project(a, reinstalled)]
        elif m == "pip-system-managed" and a.sub in ("install", "uninstall"):  # show/list read the system's
            new = [cmd[hit.start() : end].replace("python -m pip", f"{venv_py} -m pip", 1)]
        elif m == "conda":
            before = cmd[: hit.start()]
            new = _conda(fx, a, reinstalled, bool(re.search(r"\b[A-Za-z_]\w*=\S+\s+$", before)))
        if new is None:
            continue
        first = not cmd[: hit.start()].strip() or bool(re.fullmatch(r"\s*([A-Za-z_]\w*=\S+\s+)+", cmd[: hit.start()]))
        out.append(cmd[pos : hit.start()] + ("\n".join(new) if first else " && ".join(new)))
        pos = end
    return "".join(out) + cmd[pos:] if out else cmd


def adapt_commands(fx: Facts, commands: Sequence[str]) -> Tuple[str, ...]:
    """``commands`` with every ``python -m pip ...`` written for the environment's manager (see above),
    then aimed at the diagnosed interpreter (:func:`for_target`).

    pip and conda-pip: unchanged. uv-venv: ``uv pip``. uv-project: ``uv add`` / ``uv remove`` (or
    ``uv pip uninstall`` where the fix reinstalls), reads with ``uv pip``. conda: the packages conda
    installed with conda, the rest with pip. pip-system-managed: installs with the venv's pip, after one
    ``python3 -m venv .venv``. Pure; a command already written for the manager comes back as it was."""
    return for_target(fx, _for_manager(fx, commands))


def _for_manager(fx: Facts, commands: Sequence[str]) -> Tuple[str, ...]:
    m = manager(fx)
    if m in PIP_LIKE or (m == "conda" and (_conda_fix(commands) or _torch_mixed(fx))):
        return tuple(commands)
    reinstalled = _reinstalled(commands)
    out: List[str] = []
    for c in commands:
        out += _rewrite(fx, m, c, reinstalled).split("\n")
    if m == "pip-system-managed" and out != list(commands):
        if not any("-m venv" in c or "uv venv" in c for c in out):
            at = next(i for i, (a, b) in enumerate(zip(out, commands)) if a != b)
            out.insert(at, "python3 -m venv .venv  # this Python's packages are managed by the OS (PEP 668): use a venv")
    return tuple(out)


# ---------------------------------------------------------------- the diagnosed interpreter
#
# ``cudadoctor check --python /env/bin/python`` (the cluster set-up), or cudadoctor run by uvx/pipx
# diagnosing the active environment: a plain ``python -m pip`` installs into whatever ``python`` the
# shell finds, which may be another interpreter. for_target() names the diagnosed one wherever a
# plain command would miss it, and only there (the common case keeps its short commands):
#
# ==================================  =========================================================
# command                             aimed at the diagnosed interpreter when it is not ...
# ==================================  =========================================================
# ``python -m pip``, ``python -c``    ... the first ``python`` on PATH (recorded at collection,
#                                     tool.interpreter.python_on_path_is_target): ``/env/bin/python -m pip``
# ``uv pip ...``                      ... the environment uv picks (VIRTUAL_ENV, else CONDA_PREFIX,
#                                     else ./.venv): ``uv pip install --python /env/bin/python``
# ``conda install/remove/update``     ... the active conda environment (CONDA_PREFIX), in a conda
#                                     environment: ``-p PREFIX``
# ``uv add/remove/sync``              ... the project of the working directory: ``--project ROOT``
# ==================================  =========================================================
#
# Facts from pasted text (collect_env, a ticket) have no interpreter record: their commands are for
# the user's own ``python``, as written. A saved facts file from before these fields: the
# interpreter is named when it was given with --python.

_PY_WORD = re.compile(r"(?<![\w/\\.$-])python3?(?= +(?:-[mcXIuE]\b|setup\.py\b))")
_UV_PIP = re.compile(r"(?<![\w/\\.-])uv pip (install|uninstall|list|show|freeze|check|tree|sync)\b")
_UV_PROJECT = re.compile(r"(?<![\w/\\.-])uv (add|remove|sync|lock|tree)\b")
_CONDA = re.compile(r"(?<![\w/\\.-])conda (install|remove|uninstall|update|list)\b")


def _shell_word(path: str) -> str:
    """``path`` as one shell word (double quotes only when it needs them: Windows paths keep their backslashes)."""
    return f'"{path}"' if re.search(r"[\s'\"$&;|()<>*?`!]", path) else path


def _norm(path: Optional[str]) -> Optional[str]:
    if not path:
        return None
    p = path.replace("\\", "/").rstrip("/")
    return p.lower() if re.match(r"^[A-Za-z]:/", p) else p


def _target_python(fx: Facts) -> Optional[str]:
    """The diagnosed interpreter when a plain ``python`` would not run it; None otherwise."""
    interp = fx.dict("tool.interpreter")
    if not interp:
        return None  # pasted facts: the user's own python
    path = interp.get("path")
    exe = fx.str("python.executable")
    py = path if isinstance(path, str) and _is_abs(path) else exe or (path if isinstance(path, str) else None)
    if not py:
        return None
    same = interp.get("python_on_path_is_target")
    if isinstance(same, bool):
        return None if same else py
    return py if interp.get("reason") == "option" else None


def _is_abs(path: str) -> bool:
    return path.startswith(("/", "~")) or bool(re.match(r"^[A-Za-z]:[\\/]", path))


def _uv_finds_target(fx: Facts) -> bool:
    """uv pip's own choice (VIRTUAL_ENV, else CONDA_PREFIX, else .venv in the working directory) is
    the diagnosed environment."""
    prefix = _norm(fx.str("python.prefix"))
    venv, conda = _norm(fx.env("VIRTUAL_ENV")), _norm(fx.env("CONDA_PREFIX") or fx.str("python.conda_prefix"))
    if venv or conda:
        return (venv or conda) == prefix
    cwd = _norm(fx.str("python.cwd"))
    return bool(cwd and prefix == cwd + "/.venv")


def _conda_active_is_target(fx: Facts) -> bool:
    active = _norm(fx.env("CONDA_PREFIX") or fx.str("python.conda_prefix"))
    return active is not None and active == _norm(fx.str("python.prefix"))


def _project_root(fx: Facts) -> Optional[str]:
    """The uv project's root when the working directory is outside it (``uv add`` acts on the cwd's project)."""
    root = (fx.dict("python.manager.uv_project") or {}).get("root")
    cwd = _norm(fx.str("python.cwd"))
    if not isinstance(root, str) or not cwd:
        return None
    r = _norm(root) or ""
    return None if cwd == r or cwd.startswith(r + "/") else root


def _add_option(cmd: str, at: "re.Pattern[str]", present: str, option: str) -> str:
    """``option`` after each ``at`` in ``cmd``, unless the command already says ``present``."""
    return cmd if re.search(present, cmd) else at.sub(lambda m: f"{m.group(0)} {option}", cmd)


def for_target(fx: Facts, commands: Sequence[str]) -> Tuple[str, ...]:
    """``commands`` aimed at the diagnosed interpreter where a plain command would act on another
    (see the table above). Pure; pasted facts and the common case come back unchanged."""
    if not fx.dict("tool.interpreter"):
        return tuple(commands)
    py = _target_python(fx)
    prefix = fx.str("python.prefix")
    uv_py = None if _uv_finds_target(fx) else fx.str("python.executable") or py
    conda_env = fx.bool("python.conda") or bool(fx.dict("python.manager.conda_packages"))
    conda_p = prefix if (prefix and conda_env and not _conda_active_is_target(fx)) else None
    root = _project_root(fx)
    out = []
    for c in commands:
        if py:
            c = _PY_WORD.sub(lambda m: _shell_word(py), c)
        if uv_py:
            c = _add_option(c, _UV_PIP, r" --python\b", f"--python {_shell_word(uv_py)}")
        if root:
            c = _add_option(c, _UV_PROJECT, r" --project\b", f"--project {_shell_word(root)}")
        if conda_p:
            c = _add_option(c, _CONDA, r" (-p|--prefix|-n|--name)\b", f"-p {_shell_word(conda_p)}")
        out.append(c)
    return tuple(out)
