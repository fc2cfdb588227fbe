"""Text and markdown rendering of smoke outputs: a single-GPU result (kind ``cudadoctor-smoke``) and a
distributed job report (kind ``cudadoctor-smoke-job``); JSON is the document itself (document.dumps)."""

from __future__ import annotations

from typing import List

from ..document import clean, dumps

from ..smoke.distributed import ENV_PREFIXES
from ..smoke.distributed import STAGES as JOB_STAGES

MARK = {"pass": "✓", "fail": "✗", "skip": "–"}


def _fmt_num(v, unit="", digits=1):
    if v is None:
        return "n/a"
    return f"{v:,.{digits}f}{unit}"


def _numbers(result: dict) -> list[tuple[str, str]]:
    """The headline numbers as (label, value) pairs."""
    out = []
    d = result.get("data") or {}
    if d.get("source"):
        src = d["source"]
        if src == "synthetic":
            src += " (generated seven-segment digits, NOT MNIST)"
        out.append(
            (
                "data",
                f"{src}"
                + (f" from {d['path']}" if d.get("path") else "")
                + (f", load {d['load_s']} s" if d.get("load_s") is not None else ""),
            )
        )
    for s in result.get("stages", []):
        ev = s.get("evidence") or {}
        dev = s.get("device") or ""
        if s["name"] == "training" and "test_accuracy" in ev:
            t = ev.get("time_to_target_s")
            out.append(
                (
                    f"training {dev}",
                    f"test accuracy {ev['test_accuracy']:.4f} (bar {ev.get('accuracy_bar')}) "
                    f"after {ev.get('epochs')} epochs, {ev.get('steps')} steps"
                    + (f", {t:.2f} s to the bar" if t is not None else ", bar not reached")
                    + f", {_fmt_num(ev.get('samples_per_s'), ' samples/s', 0)}",
                )
            )
            curves = [
                (label, sparkline(v))
                for label, v in (
                    ("loss", ev.get("loss_curve")),
                    ("accuracy", [h.get("test_accuracy") for h in ev.get("history") or [] if isinstance(h, dict)]),
                )
                if sparkline(v)
            ]
            if curves:
                out.append((f"history {dev}", "   ".join(f"{label} {line}" for label, line in curves)))
        if s["name"] == "throughput" and ev:
            line = f"CPU {_fmt_num(ev.get('cpu_samples_per_s'), ' samples/s', 0)}"
            if ev.get("device_samples_per_s") is not None:
                line = (
                    f"{dev} {_fmt_num(ev['device_samples_per_s'], ' samples/s', 0)}, " + line + f", speedup {ev.get('speedup')}x"
                )
            out.append((f"throughput {dev}", line))
        if s["name"] == "transfers" and "h2d_pinned_gbps" in ev:
            out.append(
                (
                    f"transfers {dev}",
                    f"H2D pinned {ev['h2d_pinned_gbps']} / pageable {ev['h2d_pageable_gbps']} "
                    f"GB/s, D2H pinned {ev['d2h_pinned_gbps']} / pageable {ev['d2h_pageable_gbps']} GB/s",
                )
            )
    if result.get("elapsed_s") is not None:
        out.append(("total", f"{result['elapsed_s']:.1f} s (child process, incl. Python/torch start-up)"))
    return out


def _error_lines(result: dict) -> list[str]:
    e = result.get("error")
    if not e:
        return []
    lines = [f"error ({e.get('kind')}): {e.get('message')}"]
    for d in e.get("diagnosis") or []:
        lines.append(f"✗ {d.get('code')}: {d.get('title')}")
        cmds = d.get("fix") or []
        if cmds:
            lines.append("    fix: " + cmds[0])
            lines += ["         " + c for c in cmds[1:]]
    if e.get("kind") in ("crash", "timeout") and e.get("stderr_tail"):
        lines.append("last output of the workload:")
        lines += ["  " + ln for ln in e["stderr_tail"].splitlines()[-15:]]
    return lines


_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: object) -> str:
    """A one-line picture of a series (``▇▅▃▂▁``); empty when there is nothing to draw."""
    if not isinstance(values, list):
        return ""
    nums = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v]
    if len(nums) < 2:
        return ""
    lo, hi = min(nums), max(nums)
    span = (hi - lo) or 1.0
    return "".join(_BARS[min(len(_BARS) - 1, int((v - lo) / span * len(_BARS)))] for v in nums)


def render_text(result: dict) -> str:
    lines = [f"cudadoctor smoke --device {result.get('device')}: {str(result.get('status')).upper()}"]
    stages = result.get("stages", [])
    multi = len({s.get("device") for s in stages}) > 1
    wname = max([len(s["name"]) for s in stages] + [8])
    for s in stages:
        dev = f"[{s.get('device')}] " if multi else ""
        dur = f"{s.get('duration_s', 0):7.2f} s"
        lines.append(f"{MARK.get(s['verdict'], '?')} {dev}{s['name']:<{wname}} {dur}  {s.get('message', '')}")
    nums = _numbers(result)
    if nums:
        lines.append("")
        w = max(len(k) for k, _ in nums)
        lines += [f"  {k:<{w}}  {v}" for k, v in nums]
    err = _error_lines(result)
    if err:
        lines.append("")
        lines += err
    return "\n".join(lines) + "\n"


def _md_cell(s) -> str:
    """Untrusted text (device names, error messages) made inert for a Markdown table cell."""
    from .mdtext import md_escape

    return md_escape(s)


def render_markdown(result: dict) -> str:
    lines = [
        f"## cudadoctor smoke — {_md_cell(result.get('device'))}: **{_md_cell(str(result.get('status')).upper())}**",
        "",
        "| | stage | device | time (s) | result |",
        "|---|---|---|---:|---|",
    ]
    for s in result.get("stages", []):
        lines.append(
            f"| {MARK.get(s['verdict'], '?')} | {_md_cell(s['name'])} | {_md_cell(s.get('device'))} | "
            f"{s.get('duration_s', 0):.2f} | {_md_cell(s.get('message', ''))} |"
        )
    nums = _numbers(result)
    if nums:
        lines += ["", "| | |", "|---|---|"] + [f"| {_md_cell(k)} | {_md_cell(v)} |" for k, v in nums]
    e = result.get("error")
    if e:
        from .mdtext import fence

        lines += ["", f"**Error ({_md_cell(e.get('kind'))}):**", "", fence(str(e.get("message")))]
        for d in e.get("diagnosis") or []:
            lines += ["", f"- `{d.get('code')}`: {_md_cell(d.get('title'))}"]
            if d.get("fix"):
                lines += ["", fence("\n".join(d["fix"]), "sh")]
        if e.get("kind") in ("crash", "timeout") and e.get("stderr_tail"):
            lines += [
                "",
                "<details><summary>last output of the workload</summary>",
                "",
                fence(e["stderr_tail"]),
                "",
                "</details>",
            ]
    return "\n".join(lines) + "\n"


def render_json(result: dict) -> str:
    return dumps(result)


# ---------------------------------------------------------------------------------------------------- the job


def _size(b: int) -> str:
    for unit, name in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if b >= unit and b % unit == 0:
            return f"{b // unit} {name}"
    return f"{b} B"


def _stage_marks(row: dict) -> List[str]:
    by = {s["name"]: s["verdict"] for s in row.get("stages") or []}
    return [MARK.get(by[s], "?") if s in by else "·" for s in JOB_STAGES]


def _net_line(rep: dict) -> str:
    net = rep.get("network") or {}
    iface = net.get("interface") or "unknown"
    src = f" ({net['source']})" if net.get("source") else ""
    ip = f", local {net['local_ip']}" if net.get("local_ip") else ""
    return f"interface {iface}{src}{ip}"


def _headline(rep: dict) -> str:
    return (
        f"cudadoctor smoke --distributed ({rep.get('backend')}, {rep.get('world_size')} ranks, device "
        f"{rep.get('device')}): {str(rep.get('status')).upper()}"
    )


def _collective_lines(rep: dict) -> List[str]:
    out = []
    rows = [r for r in rep.get("ranks") or [] if r.get("stages")]
    for name, what in (("all-reduce", "all-reduce, exact"), ("broadcast", "broadcast from rank 0, exact")):
        verdicts = [next((s for s in r["stages"] if s["name"] == name), None) for r in rows]
        ok = [v for v in verdicts if v and v["verdict"] == "pass"]
        if ok and len(ok) == rep.get("world_size"):
            ev = ok[0].get("evidence") or {}
            extra = (
                f": sum of {ev.get('contribution')} = {ev.get('expected')}"
                if name == "all-reduce"
                else f": {ev.get('elements')} elements, pattern {ev.get('pattern')}"
            )
            out.append(f"{what} on every rank{extra}")
    tr = rep.get("training")
    if tr:
        out.append(
            f"DDP training on every rank: test accuracy {tr.get('test_accuracy', 0):.4f} (bar "
            f"{tr.get('accuracy_bar')}) after {tr.get('epochs')} epochs, {tr.get('steps')} steps of "
            f"{tr.get('batch')} over {tr.get('ranks')} ranks; replicas identical"
        )
    return out


def _bw_rows(rep: dict) -> List[List[str]]:
    bw = rep.get("bandwidth") or {}
    return [
        [_size(r["bytes"]), f"{r['time_us']:.1f}", f"{r['algbw_gbps']:.3g}", f"{r['busbw_gbps']:.3g}", str(r["iters"])]
        for r in bw.get("rows") or []
    ]


def _failure_lines(rep: dict) -> List[str]:
    """The ranks at fault first, then the ranks that only failed because of them, then their last output."""
    if rep.get("status") == "pass":
        return []
    lines = [""]
    culprits = rep.get("culprits") or []
    lines += [f"✗ {c['reason']}" for c in culprits]
    if not culprits and rep.get("error"):
        lines.append(f"✗ {rep['error']['message']}")
    for r in rep.get("ranks") or []:
        e = r.get("error") or {}
        if r.get("status") != "pass" and e and not any(c["rank"] == r.get("rank") for c in culprits):
            lines.append(f"  rank {r.get('rank')} (follows from the above): {e.get('message')}")
    for r in rep.get("ranks") or []:
        if r.get("status") != "pass" and r.get("stderr_tail"):
            lines.append(f"  last output of rank {r.get('rank')}'s workload:")
            lines += ["    " + ln for ln in r["stderr_tail"].splitlines()[-10:]]
    return lines


def job_text(rep: dict) -> str:
    lines = [_headline(rep)]
    m = rep.get("master") or {}
    lines.append(
        f"  master {m.get('addr')}:{m.get('port')}, {_net_line(rep)}; launcher {(rep.get('launcher') or {}).get('kind')}"
    )
    env = {k: v for k, v in (rep.get("env") or {}).items() if k.startswith(ENV_PREFIXES)}
    lines.append("  " + (", ".join(f"{k}={v}" for k, v in env.items()) if env else "no NCCL_*/GLOO_* variables set"))
    lines.append("")
    lines.append("  rank  host             runs on  " + " ".join(f"{s[:9]:<9}" for s in JOB_STAGES) + "  result")
    for r in rep.get("ranks") or []:
        marks = _stage_marks(r)
        lines.append(
            f"  {r.get('rank'):>4}  {str(r.get('hostname') or '?')[:16]:<16} {str(r.get('device') or '?'):<8} "
            + " ".join(f"{mk:<9}" for mk in marks)
            + f"  {r.get('status')}"
        )
    coll = _collective_lines(rep)
    if coll:
        lines.append("")
        lines += ["  " + c for c in coll]
    bw = rep.get("bandwidth")
    if bw:
        lines.append("")
        lines.append(
            f"  all_reduce bandwidth ({bw.get('dtype')}, in place, {bw.get('world_size')} ranks; "
            f"busbw = algbw x {bw.get('busbw_factor')}; GB/s = 1e9 B/s; slowest rank's mean time):"
        )
        lines.append(f"  {'size':>8}  {'time (us)':>10}  {'algbw GB/s':>10}  {'busbw GB/s':>10}  {'iters':>5}")
        for row in _bw_rows(rep):
            lines.append(f"  {row[0]:>8}  {row[1]:>10}  {row[2]:>10}  {row[3]:>10}  {row[4]:>5}")
        lines.append(f"  note: {bw.get('note')}")
    lines += _failure_lines(rep)
    lines.append("")
    lines.append(
        f"  total {rep.get('elapsed_s', 0):.1f} s on rank 0 (bounded waits: --rank-timeout {rep.get('rank_timeout_s'):g} s)"
    )
    return "\n".join(clean(ln) for ln in lines) + "\n"  # host names, messages: untrusted text


def job_markdown(rep: dict) -> str:
    """The job report for an issue or a wiki page: its text rendering, fenced."""
    from .mdtext import fence

    head = _headline(rep).replace("cudadoctor smoke --distributed", "`cudadoctor smoke --distributed`")
    return f"## {_md_cell(head)}\n\n" + fence(job_text(rep), "text") + "\n"


def render(result: dict, fmt: str = "text") -> str:
    if fmt == "json":
        return render_json(result)
    if result.get("kind") == "cudadoctor-smoke-job":
        return {"text": job_text, "markdown": job_markdown}[fmt](result)
    return {"text": render_text, "markdown": render_markdown}[fmt](result)
