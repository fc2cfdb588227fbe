"""Output paths with placeholders, written atomically.

``-o`` of every command accepts placeholders so that one command run on every node of a cluster
(by Slurm, Kubernetes, pdsh...) writes one report per node into a shared directory::

    srun --ntasks-per-node=1 cudadoctor check --format json -o /shared/reports/{host}.json

Placeholders (docs/cluster.md has the table):

==============  ==========================================================================
``{host}``      this machine's host name up to the first dot (``node017``)
``{fqdn}``      the full host name as the OS reports it (``node017.cluster.example``)
``{date}``      UTC date ``YYYYMMDD``; ``{time}`` UTC ``HHMMSS``; ``{datetime}`` both, ``YYYYMMDDTHHMMSSZ``
``{pid}``       this process's id
``{rank}``      SLURM_PROCID, RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK (first set)
``{local_rank}`` SLURM_LOCALID, LOCAL_RANK or OMPI_COMM_WORLD_LOCAL_RANK
``{node}``      SLURM_NODEID, GROUP_RANK or NODE_RANK (the node's index in the job)
``{job}``       SLURM_JOB_ID, PBS_JOBID or LSB_JOBID
``{env:NAME}``  the environment variable NAME (e.g. ``{env:NODE_NAME}`` from the Kubernetes downward API)
``{{`` ``}}``   a literal brace
==============  ==========================================================================

An unknown placeholder, or one whose variables are all unset, is an error (a typo must not
silently make every node write the same file). Substituted values are sanitised: anything but
letters, digits, ``.``, ``_``, ``-`` and ``+`` becomes ``_``, so a value can never add a
directory level or climb out with ``..``. The text the user wrote around the placeholders is
kept as written.

:func:`write_atomic` creates the directory and writes a temporary file next to the target and
renames it over the target, so a reader (``cudadoctor fleet`` running while nodes still write)
sees either the old file or the whole new one, never half a file.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import secrets
import socket
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple

#: Placeholders read from the environment: name -> variables tried in order.
ENV_PLACEHOLDERS: Dict[str, Tuple[str, ...]] = {
    "rank": ("SLURM_PROCID", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"),
    "local_rank": ("SLURM_LOCALID", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"),
    "node": ("SLURM_NODEID", "GROUP_RANK", "NODE_RANK"),
    "job": ("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID"),
}
OTHER_PLACEHOLDERS = ("host", "fqdn", "date", "time", "datetime", "pid")
KNOWN = OTHER_PLACEHOLDERS + tuple(ENV_PLACEHOLDERS) + ("env:NAME",)

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class OutputPathError(ValueError):
    """A bad ``-o`` template; the message is one line for the user."""


def has_placeholders(template: str) -> bool:
    return "{" in template or "}" in template


def sanitize(value: str) -> str:
    """A placeholder's value made safe as (part of) one file name."""
    v = _UNSAFE.sub("_", value.strip())[:128]
    if not v or set(v) <= {"."}:
        return "_"
    if v.startswith("."):
        v = "_" + v[1:]  # no hidden files, no '..'
    return v


def _hostname() -> str:
    try:
        return socket.gethostname() or ""
    except OSError:
        return ""


def _short(host: str) -> str:
    if re.fullmatch(r"[0-9.]+|.*:.*", host):  # an address: keep it whole
        return host
    return host.split(".", 1)[0]


def expand(
    template: str,
    env: Optional[Mapping[str, str]] = None,
    now: Optional[_dt.datetime] = None,
    hostname: Optional[Callable[[], str]] = None,
    pid: Optional[int] = None,
) -> str:
    """Replace the placeholders of ``template``; raises :class:`OutputPathError` on a bad one."""
    if not has_placeholders(template):
        return template
    env = os.environ if env is None else env
    now = now or _dt.datetime.now(_dt.timezone.utc)
    now = now.astimezone(_dt.timezone.utc)
    get_host = hostname or _hostname

    def value(name: str) -> str:
        if name == "host" or name == "fqdn":
            h = get_host()
            if not h:
                raise OutputPathError(f"-o {template}: {{{name}}}: the host name is not known")
            return _short(h) if name == "host" else h
        if name == "date":
            return now.strftime("%Y%m%d")
        if name == "time":
            return now.strftime("%H%M%S")
        if name == "datetime":
            return now.strftime("%Y%m%dT%H%M%SZ")
        if name == "pid":
            return str(os.getpid() if pid is None else pid)
        if name in ENV_PLACEHOLDERS:
            for var in ENV_PLACEHOLDERS[name]:
                v = env.get(var)
                if v is not None and v.strip():
                    return v
            raise OutputPathError(f"-o {template}: {{{name}}} needs one of {', '.join(ENV_PLACEHOLDERS[name])} set (none is)")
        if name.startswith("env:"):
            var = name[4:]
            if not _ENV_NAME.match(var):
                raise OutputPathError(f"-o {template}: {{{name}}}: {var!r} is not an environment variable name")
            v = env.get(var)
            if v is None or not v.strip():
                raise OutputPathError(f"-o {template}: {{{name}}}: {var} is not set")
            return v
        raise OutputPathError(
            f"-o {template}: unknown placeholder {{{name}}} (known: "
            + ", ".join("{" + k + "}" for k in KNOWN)
            + "; write {{ and }} for literal braces)"
        )

    out = []
    pos = 0
    for m in _TOKEN.finditer(template):
        out.append(template[pos : m.start()])
        tok = m.group(0)
        if tok == "{{":
            out.append("{")
        elif tok == "}}":
            out.append("}")
        elif m.group(1) is not None:
            out.append(sanitize(value(m.group(1).strip())))
        else:
            raise OutputPathError(f"-o {template}: unmatched {tok!r} (write {tok}{tok} for a literal brace)")
        pos = m.end()
    out.append(template[pos:])
    path = "".join(out)
    if not path:
        raise OutputPathError(f"-o {template}: expands to an empty path")
    return path


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same directory and a rename.

    The directory is created. The file gets the usual permissions (0666 less the umask), not
    a temporary file's 0600, so that a shared reports directory stays readable.

    Only a regular file (or a new path) is replaced: ``-o /dev/null``, ``-o /dev/stdout`` or a named
    pipe is written to as it is (a rename would put a regular file in its place: as root, that
    replaced /dev/null itself). A symbolic link to a file keeps pointing at it.
    """
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    path = os.path.realpath(path) if os.path.islink(path) else path
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    base = os.path.basename(path)
    tmp = os.path.join(directory, f".{base}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def describe() -> Sequence[str]:
    """The known placeholders, for help texts."""
    return ["{" + k + "}" for k in KNOWN]
