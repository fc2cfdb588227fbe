"""Fleet: read the reports of many nodes back and say which nodes deviate and which are broken.

Cluster engines (Slurm, Kubernetes, pdsh) run ``cudadoctor check --format json -o DIR/{host}.json``
on every node. This module finds and reads those files (:func:`find_files`, :func:`read_all`);
:func:`cudadoctor.fleet_summary.run` reads such a directory and

* groups nodes by *configuration*: driver, torch version and its CUDA variant, GPU model and
  count, cudadoctor version and knowledge-base date (:data:`KEYS`);
* names the most common configuration and every other one, with what differs and which nodes;
* counts findings by code with the nodes that have each;
* summarises `cudadoctor smoke` results found alongside (one file per rank of
  ``smoke --distributed``): failed stages with the rank that caused them first, bandwidth;
* lists the files it could not read (corrupt, truncated, too large, another schema) and goes on.

Input files are untrusted: JSON only (never evaluated or unpickled), at most
:data:`MAX_FILE_BYTES` each, regular files only. Reports carry their findings and are not
re-diagnosed (unless asked); facts-only files are diagnosed with today's checks. Node names are
the report's ``facts.system.hostname`` (a pseudonym in redacted reports: nothing here relies on
the name being real), else the file name.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import __version__
from . import kb as _kb
from .facts import REPORT_KIND, Facts, FactsError, as_object, decode_json, facts_of, sanitize
from .interpret import local_tag, mm_str
from .model import SEVERITIES, severity_rank
from .smokedoc import smoke_numbers

FLEET_KIND = "cudadoctor-fleet"
SMOKE_DIST_KIND = "cudadoctor-smoke-distributed"
#: Every smoke output: single GPU, a distributed job, one rank (--per-rank); the last two kinds are the
#: previous release's (per rank, and the combined job report), read for one release.
SMOKE_JOB_KINDS = ("cudadoctor-smoke-job", "cudadoctor-smoke-distributed-combined")
SMOKE_KINDS = ("cudadoctor-smoke", "cudadoctor-smoke-rank", SMOKE_DIST_KIND) + SMOKE_JOB_KINDS
#: Largest file read. Real reports are tens of kB; a larger file is listed as unreadable.
MAX_FILE_BYTES = 8 * 1024 * 1024

#: The configuration of a node: (key, label). Order is the display order.
KEYS: Tuple[Tuple[str, str], ...] = (
    ("driver", "NVIDIA driver"),
    ("torch", "torch"),
    ("variant", "torch CUDA variant"),
    ("gpu", "GPU model"),
    ("gpus", "GPU count"),
    ("cudadoctor", "cudadoctor"),
    ("kb_date", "knowledge base"),
)
KEY_NAMES = tuple(k for k, _ in KEYS)
LABELS = dict(KEYS)
UNKNOWN = "unknown"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


class FleetUsageError(ValueError):
    """Bad usage (a path that does not exist, nothing to read): one line, exit 2."""


class UnreadableFile(ValueError):
    """One file that cannot be used; the message is one line, without the file name."""


class SmokeResultFile(UnreadableFile):
    """A `cudadoctor smoke` result (single-GPU, or one rank of --distributed): read as such."""

    def __init__(self, doc: Dict[str, Any]):
        super().__init__("a smoke result")
        self.doc = doc


class FleetSummaryFile(UnreadableFile):
    """A fleet summary written next to the reports (``fleet -o DIR/...``): skipped, not an error."""


@dataclass
class Node:
    name: str  # as given by the report (may be a pseudonym), else the file's name
    file: str
    kind: str  # report | facts
    config: Dict[str, str]
    findings: Dict[str, str]  # code -> worst severity on this node
    titles: Dict[str, str] = field(default_factory=dict)  # code -> the first title seen
    when: str = ""  # generated_at / collected_at, for --latest
    rediagnosed: bool = False
    display: str = ""  # name, or "name (file)" when two files claim the same name

    def count(self, severity: str) -> int:
        return sum(1 for s in self.findings.values() if s == severity)

    @property
    def label(self) -> str:
        return self.display or self.name


@dataclass
class Unreadable:
    file: str
    reason: str


# ------------------------------------------------------------------------------ finding files


def find_files(paths: Sequence[str]) -> List[str]:
    """The files to read: directories are walked (``*.json``, hidden entries skipped); files as given.

    Raises :class:`FleetUsageError` for a path that does not exist.
    """
    out: List[str] = []
    seen = set()
    for p in paths:
        if not os.path.lexists(p):
            raise FleetUsageError(f"{p}: no such file or directory")
        if os.path.isdir(p):
            found: List[str] = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(os.path.join(root, f) for f in files if f.endswith(".json") and not f.startswith("."))
            found.sort(key=natural_key)
        else:
            found = [p]
        for f in found:
            key = os.path.normpath(f)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def natural_key(s: str) -> Tuple[Any, ...]:
    """node2 before node10."""
    return tuple(int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", s))


def read_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UnreadableFile("no such file (removed while reading?)") from None
    except OSError as e:
        raise UnreadableFile(f"cannot read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise UnreadableFile("not a regular file")
    if st.st_size > limit:
        raise UnreadableFile(f"larger than {limit // (1024 * 1024)} MiB ({st.st_size} bytes); not a cudadoctor report")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except PermissionError:
        raise UnreadableFile("permission denied") from None
    except OSError as e:
        raise UnreadableFile(f"cannot read ({e.strerror or e})") from None
    if len(data) > limit:
        raise UnreadableFile(f"larger than {limit // (1024 * 1024)} MiB; not a cudadoctor report")
    return data


def parse(data: bytes) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(the whole document, its facts) from a report or facts file; raises :class:`UnreadableFile`."""
    try:
        doc = decode_json(data)
        kind = doc.get("kind") if isinstance(doc, dict) else None
        if isinstance(doc, dict) and (
            kind in SMOKE_KINDS or (kind is None and doc.get("schema") == 1 and isinstance(doc.get("stages"), list))
        ):
            raise SmokeResultFile(doc)
        if kind == FLEET_KIND:
            raise FleetSummaryFile("a fleet summary, not a node's report")
        return doc, facts_of(doc)
    except FactsError as e:
        raise UnreadableFile(str(e)) from None


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


# ------------------------------------------------------------------------------ smoke results


@dataclass
class SmokeRun:
    """One `cudadoctor smoke` result: a single-GPU run, or one rank of `smoke --distributed`."""

    name: str  # the host the rank ran on (distributed), else the file name
    file: str
    rank: Optional[int]
    world_size: Optional[int]
    status: str  # pass | fail | error
    failed_stage: Optional[str]
    message: str
    busbw_gbps: Optional[float]
    numbers: Dict[str, Any] = field(default_factory=dict)  # cudadoctor.smokedoc.smoke_numbers
    job: Optional[str] = None  # "job:RUN_ID" (a job report's row) or "rank:RUN_ID" (--per-rank): a rank counts once

    @property
    def label(self) -> str:
        return self.name if self.rank is None else f"{self.name}#{self.rank}"


def smoke_run(path: str, doc: Dict[str, Any]) -> SmokeRun:
    status = doc.get("status")
    if status not in ("pass", "fail", "error"):
        raise UnreadableFile(f"smoke result with status {_short(status)}")
    stages = doc.get("stages")
    if not isinstance(stages, list):
        raise UnreadableFile("smoke result without a list of stages")
    if not all(isinstance(x, dict) and isinstance(x.get("name"), str) and isinstance(x.get("verdict"), str) for x in stages):
        raise UnreadableFile("smoke result with a malformed stage")
    d = as_object(doc.get("distributed"))
    rank = d.get("rank") if isinstance(d.get("rank"), int) and not isinstance(d.get("rank"), bool) else None
    world = d.get("world_size") if isinstance(d.get("world_size"), int) and not isinstance(d.get("world_size"), bool) else None
    host = d.get("host") if isinstance(d.get("host"), str) and d["host"].strip() else None
    failed = next((x for x in stages if x["verdict"] == "fail"), None)
    err = as_object(doc.get("error"))
    message = str(failed.get("message", "")) if failed else str(err.get("message") or "")
    busbw = None
    for x in stages:
        v = as_object(x.get("evidence")).get("busbw_gbps")
        if x["name"] == "bandwidth" and isinstance(v, (int, float)) and not isinstance(v, bool):
            busbw = float(v)
    return SmokeRun(
        name=sanitize(host or _stem(path)),
        file=sanitize(path),
        rank=rank,
        world_size=world,
        status=status,
        failed_stage=sanitize(failed["name"]) if failed else None,
        message=sanitize(message.splitlines()[0][:300] if message else ""),
        busbw_gbps=busbw,
    )


def smoke_runs(path: str, doc: Dict[str, Any]) -> List[SmokeRun]:
    """The runs in one smoke output: one, or one per rank of a job report."""
    if doc.get("kind") not in SMOKE_JOB_KINDS:
        run = smoke_run(path, doc)
        d = as_object(doc.get("distributed"))
        run.job = f"rank:{d['run_id']}" if doc.get("kind") == "cudadoctor-smoke-rank" and d.get("run_id") else None
        return [run]
    ranks = doc.get("ranks")
    if not isinstance(ranks, list) or not all(isinstance(r, dict) for r in ranks):
        raise UnreadableFile("smoke job report without a list of ranks")
    run_id = (doc.get("launcher") or {}).get("run_id") if isinstance(doc.get("launcher"), dict) else None
    runs = []
    for r in ranks:
        row = dict(
            r,
            status=r.get("status") if r.get("status") in ("pass", "fail", "error") else "fail",
            stages=r.get("stages") or [],
            distributed={"rank": r.get("rank"), "world_size": doc.get("world_size"), "host": r.get("hostname")},
        )
        run = smoke_run(path, row)
        run.job = f"job:{run_id}" if run_id else None
        runs.append(run)
    return runs


_CONSEQUENCES = (
    "stopped by the launcher",
    "timed out",
    "timeout",
    "connection closed by peer",
    "connection reset",
    "waiting for clients",
    "not run:",
)


def _is_consequence(message: str) -> bool:
    """A failure that is usually the effect of another rank's (listed after the causes)."""
    m = message.lower()
    return any(c in m for c in _CONSEQUENCES)


def smoke_summary(runs: List[SmokeRun]) -> Optional[Dict[str, Any]]:
    if not runs:
        return None
    runs = sorted(runs, key=lambda r: (natural_key(r.name), r.rank if r.rank is not None else -1, r.file))
    hosts: Dict[str, Dict[str, List[Any]]] = {}
    for r in runs:
        h = hosts.setdefault(r.name, {"ranks": [], "failed": []})
        h["ranks"].append(r.rank)
        if r.status != "pass":
            h["failed"].append(r.rank)
    # Grouped by stage and by the shape of the message (numbers blanked), so that the rank with
    # the root cause is not hidden behind the peers that timed out or were stopped because of it.
    stages: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for r in runs:
        if r.status != "pass":
            stage = r.failed_stage or ("(error)" if r.status == "error" else "(unknown)")
            shape = re.sub(r"\d+(?:\.\d+)?", "N", r.message)[:80]
            e = stages.setdefault(
                (stage, shape), {"stage": stage, "ranks": [], "message": r.message, "consequence": _is_consequence(r.message)}
            )
            e["ranks"].append(r.label)
    failed_stages = sorted(stages.values(), key=lambda e: (e["consequence"], -len(e["ranks"]), e["stage"]))
    for e in failed_stages:
        e["count"] = len(e["ranks"])
    bws = sorted((r.busbw_gbps, r.label) for r in runs if r.busbw_gbps is not None)
    bandwidth = None
    if bws:
        vals = [b for b, _ in bws]
        med = vals[len(vals) // 2] if len(vals) % 2 else (vals[len(vals) // 2 - 1] + vals[len(vals) // 2]) / 2
        bandwidth = {
            "busbw_gbps": {"min": vals[0], "median": med, "max": vals[-1]},
            "slowest": [{"rank": lbl, "busbw_gbps": b} for b, lbl in bws[:5]],
        }
    return {
        "runs": len(runs),
        "passed": sum(r.status == "pass" for r in runs),
        "failed": sum(r.status == "fail" for r in runs),
        "errors": sum(r.status == "error" for r in runs),
        "world_sizes": sorted({r.world_size for r in runs if r.world_size is not None}),
        "hosts": hosts,
        "failed_stages": failed_stages,
        "bandwidth": bandwidth,
        "results": [
            {
                "rank": r.label,
                "host": r.name,
                "file": r.file,
                "status": r.status,
                "failed_stage": r.failed_stage,
                "message": r.message,
                "busbw_gbps": r.busbw_gbps,
                "samples_per_s": r.numbers.get("device_samples_per_s") or r.numbers.get("training_samples_per_s"),
                "h2d_gbps": (r.numbers.get("transfers_gbps") or {}).get("h2d_pinned"),
            }
            for r in runs
        ],
    }


# ------------------------------------------------------------------------------ one node


def _variant(version: Optional[str], fx: Facts) -> str:
    if not version:
        return UNKNOWN
    imported = fx.str("torch.status") == "ok"
    tagged = local_tag(version) is not None
    if not tagged and not imported:
        return UNKNOWN  # a PyPI wheel without a tag: its CUDA is only known once torch is imported
    hip = fx.str("torch.hip")
    if imported and hip and not tagged:
        return "rocm" + (mm_str(hip) or hip)
    return _kb.variant_of(version, fx.str("torch.cuda")) or UNKNOWN


def node_config(fx: Facts, tool: Dict[str, Any]) -> Dict[str, str]:
    """The configuration values of one node, as display strings (``unknown`` when not known)."""
    nvml_status = fx.str("nvml.status")
    driver = fx.str("nvml.driver_version") or fx.str("system.nvidia_kernel_driver")
    if not driver:
        driver = f"not visible (nvml: {nvml_status})" if nvml_status and nvml_status != "ok" else UNKNOWN

    torch_status = fx.str("torch.status")
    version = fx.str("torch.version")
    if not version:
        dist = fx.distribution("torch")
        version = dist.get("version") if dist and isinstance(dist.get("version"), str) else None
    if version:
        torch = version
    elif torch_status == "not-installed":
        torch = "not installed"
    else:
        torch = UNKNOWN
    variant = _variant(version, fx) if version else ("none" if torch_status == "not-installed" else UNKNOWN)

    names = [str(d["name"]) for d in fx.dicts("nvml.devices") if isinstance(d.get("name"), str) and d["name"]]
    count: Optional[int] = fx.int("nvml.device_count") if nvml_status == "ok" else None
    if not names and fx.bool("torch.cuda_available"):
        names = [str(d["name"]) for d in fx.dicts("torch.devices") if isinstance(d.get("name"), str) and d["name"]]
        count = fx.int("torch.device_count")
    if names:
        c = Counter(names)
        gpu = next(iter(c)) if len(c) == 1 else " + ".join(f"{n}× {name}" for name, n in sorted(c.items()))
        gpus = str(count if count is not None else len(names))
    elif nvml_status == "ok" and count == 0:
        gpu, gpus = "none", "0"
    elif count is not None:
        gpu, gpus = UNKNOWN, str(count)
    elif fx.int("torch.device_count") == 0:
        gpu, gpus = "none visible", "0"
    else:
        gpu, gpus = UNKNOWN, UNKNOWN

    cd = tool.get("version") if isinstance(tool.get("version"), str) else fx.str("tool.version")
    kbd = tool.get("kb_date") if isinstance(tool.get("kb_date"), str) else fx.str("tool.kb_date")
    if not kbd and not tool and cd == __version__:
        # A facts file records no knowledge-base date; the knowledge base ships inside the
        # package, so the same cudadoctor version has the same one as this cudadoctor.
        kbd = _this_kb_date()
    return {
        "driver": driver,
        "torch": torch,
        "variant": variant,
        "gpu": gpu,
        "gpus": gpus,
        "cudadoctor": cd or UNKNOWN,
        "kb_date": kbd or UNKNOWN,
    }


def _this_kb_date() -> Optional[str]:
    return _kb.kb_date()


def _report_findings(doc: Dict[str, Any]) -> Tuple[Dict[str, str], Dict[str, str]]:
    raw = doc.get("findings")
    if not isinstance(raw, list):
        raise UnreadableFile("report has no 'findings' list")
    worst: Dict[str, str] = {}
    titles: Dict[str, str] = {}
    for i, f in enumerate(raw):
        if not isinstance(f, dict) or not isinstance(f.get("code"), str) or f.get("severity") not in SEVERITIES:
            raise UnreadableFile(f"finding #{i + 1} is malformed (needs a code and a severity)")
        code, sev = f["code"], f["severity"]
        if code not in worst or severity_rank(sev) < severity_rank(worst[code]):
            worst[code] = sev
        if code not in titles and isinstance(f.get("title"), str):
            titles[code] = f["title"]
    return worst, titles


Diagnoser = Callable[[Dict[str, Any]], List[Any]]


def read_node(path: str, diagnose: Optional[Diagnoser] = None, recheck: bool = False, names: str = "host") -> Node:
    """One node from one file; raises :class:`UnreadableFile`.

    ``diagnose(facts) -> findings`` is used for facts-only files (and for reports with ``recheck``).
    ``names``: ``host`` = the recorded host name, else the file name; ``file`` = the file name.
    """
    doc, facts = parse(read_bytes(path))
    fx = Facts(facts)
    is_report = doc.get("kind") == REPORT_KIND
    tool = as_object(doc.get("tool")) if is_report else {}
    rediagnosed = False
    if is_report and not recheck:
        findings, titles = _report_findings(doc)
    else:
        if diagnose is None:
            raise UnreadableFile("facts only, and nothing to diagnose it with")
        worst: Dict[str, str] = {}
        titles = {}
        for f in diagnose(facts):
            if f.code not in worst or severity_rank(f.severity) < severity_rank(worst[f.code]):
                worst[f.code] = f.severity
            titles.setdefault(f.code, f.title)
        findings = worst
        rediagnosed = True
    host = fx.str("system.hostname")
    # A pseudonym made per report names nothing staff can find (the same node gets another one in its next
    # report): the file name, which the recipes write as {host}.json on the node itself, names the node.
    per_report = (fx.dict("redaction") or {}).get("pseudonyms") == "per-report" and (fx.dict("redaction") or {}).get("applied")
    name = host.strip() if names == "host" and host and host.strip() and not per_report else _stem(path)
    when = ""
    for w in (tool.get("generated_at"), fx.get("tool.collected_at")):
        if isinstance(w, str) and w:
            when = w
            break
    # Only what is shown is made safe to print and serialise (lone surrogates from escapes such
    # as "\udcff", non-UTF-8 file names): cheaper than sanitising every document whole.
    return Node(
        name=sanitize(name),
        file=sanitize(path),
        kind="report" if is_report else "facts",
        config=sanitize(node_config(fx, tool)),
        findings=sanitize(findings),
        titles=sanitize(titles),
        when=sanitize(when),
        rediagnosed=rediagnosed,
    )


def _stem(path: str) -> str:
    base = os.path.basename(path)
    return base[:-5] if base.endswith(".json") else base


# ------------------------------------------------------------------------------ the fleet


def default_diagnoser() -> Diagnoser:
    from . import registry
    from .report import diagnose

    reg = registry.load()

    def run(facts: Dict[str, Any]) -> List[Any]:
        return diagnose(facts, reg).findings

    run.registry = reg  # type: ignore[attr-defined]
    return run


def read_all(
    files: Sequence[str], diagnose: Optional[Diagnoser] = None, recheck: bool = False, names: str = "host"
) -> Tuple[List[Node], List[Unreadable], List[SmokeRun]]:
    nodes: List[Node] = []
    bad: List[Unreadable] = []
    smoke: List[SmokeRun] = []

    def diag(facts: Dict[str, Any]) -> List[Any]:
        return (diagnose or shared_diagnoser())(facts)

    for path in files:
        try:
            nodes.append(read_node(path, diag, recheck, names))
        except FleetSummaryFile:
            continue  # an earlier `fleet -o` into the same directory
        except SmokeResultFile as e:
            try:
                for run in smoke_runs(path, e.doc):
                    run.numbers = smoke_numbers(e.doc)
                    smoke.append(run)
            except UnreadableFile as e2:
                bad.append(Unreadable(sanitize(path), sanitize(str(e2))))
            except (KeyError, TypeError, ValueError, AttributeError) as e2:
                bad.append(Unreadable(sanitize(path), f"could not be interpreted ({type(e2).__name__})"))
        except UnreadableFile as e:
            bad.append(Unreadable(sanitize(path), sanitize(str(e))))
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
            # A shape no test foresaw: this file is unusable, the others are not.
            bad.append(Unreadable(sanitize(path), sanitize(f"could not be interpreted ({type(e).__name__}: {str(e)[:120]})")))
    # a rank given both in its job's report and in its own --per-rank file is counted once
    seen = {(r.job[4:], r.rank) for r in smoke if r.job and r.job.startswith("job:")}
    smoke = [r for r in smoke if not (r.job and r.job.startswith("rank:") and (r.job[5:], r.rank) in seen)]
    return nodes, bad, smoke


_DIAG: Dict[str, Diagnoser] = {}


def shared_diagnoser() -> Diagnoser:
    """One :func:`default_diagnoser` for the process (loading the registry once)."""
    if "d" not in _DIAG:
        _DIAG["d"] = default_diagnoser()
    return _DIAG["d"]
