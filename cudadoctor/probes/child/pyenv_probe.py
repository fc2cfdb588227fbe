"""Child probe: the Python interpreter and the packages that matter, without importing them.

    python pyenv_probe.py RESULT.json

Standalone (stdlib and probe_result.py beside it, Python 3.6+), run under the interpreter being diagnosed. Reads
package metadata (importlib.metadata where available) and torch/version.py as text, so it is
fast and cannot be crashed by a broken torch.
"""

import json
import os
import re
import struct
import sys
import time

from probe_result import write_result

RELEVANT = re.compile(
    r"^(torch|torchvision|torchaudio|torchtext|torchdata|pytorch-triton.*|triton|numpy|xformers|"
    r"nvidia-.*|cuda-.*|cupy.*|flash-attn|vllm|jax|jaxlib|tensorflow.*|onnxruntime.*|"
    r"deepspeed|bitsandbytes|apex|accelerate|torch-tensorrt|tensorrt.*|pynvml|nvidia-ml-py.*|"
    r"mkl|intel-openmp|cudadoctor)$"
)

_t0 = time.perf_counter()
result = {"probe": "pyenv", "status": "running"}


def save(path):
    write_result(result, path, _t0)


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def python_info():
    cwd = _cwd()
    conda_prefix = os.environ.get("CONDA_PREFIX")
    in_conda = os.path.exists(os.path.join(sys.prefix, "conda-meta"))
    return {
        "version": "%d.%d.%d" % sys.version_info[:3],
        "version_full": sys.version,
        "implementation": sys.implementation.name,
        "executable": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "venv": getattr(sys, "base_prefix", sys.prefix) != sys.prefix,
        "conda": in_conda,
        "conda_prefix": conda_prefix,
        "bits": struct.calcsize("P") * 8,
        "platform": sys.platform,
        "user_site_enabled": bool(getattr(__import__("site"), "ENABLE_USER_SITE", False)),
        "path": [p for p in sys.path if p][:50],
        "cwd": cwd,
        "cwd_shadows": cwd_shadows(cwd),
    }


# Modules that a file or folder of the same name in the working directory replaces for every
# `python script.py`, `python -c` or REPL started there (sys.path[0] is that directory).
SHADOWABLE = ("torch", "torchvision", "torchaudio", "numpy")


def _cwd():
    try:
        return os.getcwd()
    except OSError:  # the directory was removed under us
        return None


def cwd_shadows(cwd):
    """Entries of the working directory ``cwd`` that would be imported instead of an installed package."""
    if not cwd:
        return []
    out = []
    for name in SHADOWABLE:
        for entry, kind in ((name + ".py", "module"), (name, "package")):
            p = os.path.join(cwd, entry)
            try:
                if kind == "module" and not os.path.isfile(p):
                    continue
                # A folder without __init__.py is at most a namespace portion: an installed regular
                # package still wins over it, so it shadows nothing.
                if kind == "package" and not os.path.isfile(os.path.join(p, "__init__.py")):
                    continue
            except OSError:
                continue
            item = {"name": name, "entry": entry, "kind": kind, "path": p}
            if (
                kind == "package"
                and name == "torch"
                and os.path.isfile(os.path.join(cwd, "setup.py"))
                and os.path.isdir(os.path.join(cwd, "aten"))
            ):
                item["pytorch_source_tree"] = True
            out.append(item)
    return out


def meta_dir(dist):
    """The name of a distribution's metadata directory (``torch-2.5.1.dist-info``), or ""."""
    path = getattr(dist, "_path", None)
    return os.path.basename(str(path).rstrip("/\\")) if path is not None else ""


def listed_name(dist):
    """The project name in a distribution's metadata directory name (``torch-2.5.1.dist-info``,
    ``numpy-2.1.0-py3.11.egg-info``, ``foo.egg-info`` -> its first dash-separated part), or None.

    Installers write that directory from the metadata's Name with dashes escaped, so ``norm()`` of
    both agree; the Name itself is still read for every distribution that passes this filter.
    """
    base = meta_dir(dist)
    for suffix in (".dist-info", ".egg-info"):
        if base.endswith(suffix):
            return base[: -len(suffix)].split("-")[0] or None
    return None


def headers(text):
    """The header fields of a METADATA or PKG-INFO text (RFC 822: up to the first blank line,
    continuation lines folded), as {lower-case name: [values]}. What importlib.metadata reads with
    the email package, which costs 25 ms to import and 0.5 ms a parse."""
    out = {}
    key = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line[0] in " \t":
            if key is not None:
                out[key][-1] += " " + line.strip()
            continue
        k, sep, v = line.partition(":")
        key = k.strip().lower() if sep else None
        if key is not None:
            out.setdefault(key, []).append(v.strip())
    return out


def distributions():
    try:
        from importlib import metadata
    except ImportError:
        return None, "importlib.metadata not available (Python < 3.8)"
    found = []
    for dist in metadata.distributions():
        listed = listed_name(dist)
        if listed is not None and not RELEVANT.match(norm(listed)):
            continue  # not worth reading its METADATA (most of an environment)
        h = {}
        for fname in ("METADATA", "PKG-INFO"):
            try:
                text = dist.read_text(fname)
            except Exception:
                text = None
            if text:
                h = headers(text)
                break
        name = (h.get("name") or [None])[0]
        if not name:
            try:
                name = dist.metadata["Name"]
            except Exception:
                name = None
        if not name:
            continue
        if not RELEVANT.match(norm(name)):
            continue
        version = (h.get("version") or [None])[0]
        if version is None:
            try:
                version = dist.version
            except Exception:
                version = None
        loc = None
        try:
            loc = str(dist.locate_file(""))
        except Exception:
            pass
        installer = None
        try:
            installer = (dist.read_text("INSTALLER") or "").strip() or None
        except Exception:
            pass
        editable = False
        try:
            du = dist.read_text("direct_url.json")
            if du:
                editable = bool(json.loads(du).get("dir_info", {}).get("editable"))
        except Exception:
            pass
        requires = []
        try:
            reqs = h.get("requires-dist")
            if reqs is None and not meta_dir(dist).endswith(".dist-info"):
                reqs = dist.requires  # an egg's requires.txt
            requires = [r for r in (reqs or []) if RELEVANT.match(norm(re.split(r"[ ;<>=!~\[(]", r)[0]))]
        except Exception:
            pass
        found.append(
            {
                "name": name,
                "version": version,
                "location": loc,
                "installer": installer,
                "editable": editable,
                "requires": requires[:40],
            }
        )
    return found, None


def torch_sources():
    """Every torch package directory on sys.path, in import order, with its version.py contents."""
    out = []
    for entry in sys.path:
        if not entry:
            entry = os.getcwd()
        d = os.path.join(entry, "torch")
        if os.path.isfile(os.path.join(d, "__init__.py")):
            item = {"path": d}
            vp = os.path.join(d, "version.py")
            try:
                with open(vp, encoding="utf-8", errors="replace") as f:
                    text = f.read(20000)
                for key in ("__version__", "cuda", "hip", "git_version", "debug"):
                    m = re.search(r"^%s\s*(?::\s*[^=]+)?=\s*(.+)$" % re.escape(key), text, re.M)
                    if m:
                        val = m.group(1).strip()
                        if val in ("None",):
                            item[key.strip("_")] = None
                        elif val in ("True", "False"):
                            item[key.strip("_")] = val == "True"
                        else:
                            item[key.strip("_")] = val.strip("'\"")
            except OSError:
                item["version_py"] = "missing"
            out.append(item)
    return out


# --- how the environment is managed (for fix commands in its own installer's terms) -------------

CONDA_NAMES = (
    "pytorch",
    "pytorch-gpu",
    "pytorch-cpu",
    "pytorch-cuda",
    "cpuonly",
    "torchvision",
    "torchaudio",
    "cuda-version",
    "python",
)


def manager_info(cwd):
    """What says how this environment is managed: pyvenv.cfg's ``uv`` key (a venv uv made), conda's
    conda-meta records of the torch packages (channel, build), the EXTERNALLY-MANAGED marker
    (PEP 668), and a uv project (uv.lock, [tool.uv]) whose environment this is. Only reads files."""
    out = {}
    try:
        with open(os.path.join(sys.prefix, "pyvenv.cfg"), encoding="utf-8", errors="replace") as f:
            for line in f:
                k, sep, v = line.partition("=")
                if sep and k.strip() == "uv":
                    out["uv"] = v.strip()
    except OSError:
        pass
    meta = os.path.join(sys.prefix, "conda-meta")
    try:
        names = os.listdir(meta)
    except OSError:
        names = []
    conda = {}
    for fn in names:
        if not fn.endswith(".json") or not fn.startswith(tuple(n + "-" for n in CONDA_NAMES)):
            continue
        try:
            with open(os.path.join(meta, fn), encoding="utf-8") as f:
                rec = json.load(f)
        except (OSError, ValueError):
            continue
        if rec.get("name") in CONDA_NAMES:
            conda[rec["name"]] = {k: rec.get(k) for k in ("version", "build", "channel")}
    if conda:
        out["conda_packages"] = conda
    try:
        import sysconfig

        stdlib = sysconfig.get_paths().get("stdlib")
        if stdlib and os.path.isfile(os.path.join(stdlib, "EXTERNALLY-MANAGED")):
            out["externally_managed"] = True
    except Exception:
        pass
    project = uv_project(cwd)
    if project:
        out["uv_project"] = project
    return out


def uv_project(cwd):
    """The uv project this environment belongs to: the directory holding the environment (``.venv``
    beside pyproject.toml, uv's default) or the working directory or a parent of it, with a uv.lock
    or a [tool.uv] table."""
    seen = []
    for start in (os.path.dirname(sys.prefix), cwd):
        d = start
        for _ in range(8):
            if not d or d in seen:
                break
            seen.append(d)
            lock = os.path.isfile(os.path.join(d, "uv.lock"))
            text = ""
            try:
                with open(os.path.join(d, "pyproject.toml"), encoding="utf-8", errors="replace") as f:
                    text = f.read(200000)
            except OSError:
                pass
            tool_uv = bool(re.search(r"^\s*\[\[?\s*tool\.uv[\].]", text, re.M))
            if lock or tool_uv:
                env = os.environ.get("UV_PROJECT_ENVIRONMENT") or os.path.join(d, ".venv")
                env = env if os.path.isabs(env) else os.path.join(d, env)
                return {
                    "root": d,
                    "lock": lock,
                    "tool_uv": tool_uv,
                    "pyproject": bool(text),
                    "is_this_env": os.path.realpath(env) == os.path.realpath(sys.prefix),
                    "indexes": re.findall(r"^\s*url\s*=\s*[\"']([^\"']+)[\"']", text, re.M)[:20],
                }
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return None


def main():
    path = sys.argv[-1]
    result["python"] = python_info()
    save(path)
    dists, err = distributions()
    if err:
        result["distributions_error"] = err
    else:
        result["distributions"] = dists
        by_name = {}
        for d in dists:
            by_name.setdefault(norm(d["name"]), []).append(d)
        result["duplicates"] = [
            {"name": ds[0]["name"], "versions": [d["version"] for d in ds], "locations": [d["location"] for d in ds]}
            for ds in by_name.values()
            if len(ds) > 1
        ]
    result["torch_sources"] = torch_sources()
    try:
        result["python"]["manager"] = manager_info(result["python"].get("cwd"))
    except Exception as e:  # never lose the rest of the probe for this
        result["python"]["manager"] = {"error": "%s: %s" % (type(e).__name__, e)}
    result["status"] = "ok"
    save(path)


if __name__ == "__main__":
    main()
