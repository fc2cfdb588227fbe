"""Text and markdown rendering of a `run_smoke` result (json is the dict itself)."""
from __future__ import annotations

import json

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
        out.append(("data", f"{src}" + (f" from {d['path']}" if d.get("path") else "")
                    + (f", load {d['load_s']} s" if d.get("load_s") is not None else "")))
    if d.get("torchvision") and d["torchvision"] != "ok":
        out.append(("torchvision", d["torchvision"]))
    for s in result.get("stages", []):
        ev = s.get("evidence") or {}
        dev = s.get("device") or ""
        if s["name"] == "training" and "test_accuracy" in ev:
            t = ev.get("time_to_target_s")
            out.append((f"training {dev}", f"test accuracy {ev['test_accuracy']:.4f} (bar {ev.get('accuracy_bar')}) "
                        f"after {ev.get('epochs')} epochs, {ev.get('steps')} steps"
                        + (f", {t:.2f} s to the bar" if t is not None else ", bar not reached")
                        + f", {_fmt_num(ev.get('samples_per_s'), ' samples/s', 0)}"))
        if s["name"] == "throughput" and ev:
            line = f"CPU {_fmt_num(ev.get('cpu_samples_per_s'), ' samples/s', 0)}"
            if ev.get("device_samples_per_s") is not None:
                line = (f"{dev} {_fmt_num(ev['device_samples_per_s'], ' samples/s', 0)}, " + line
                        + f", speedup {ev.get('speedup')}x")
            out.append((f"throughput {dev}", line))
        if s["name"] == "transfers" and "h2d_pinned_gbps" in ev:
            out.append((f"transfers {dev}", f"H2D pinned {ev['h2d_pinned_gbps']} / pageable {ev['h2d_pageable_gbps']} "
                        f"GB/s, D2H pinned {ev['d2h_pinned_gbps']} / pageable {ev['d2h_pageable_gbps']} GB/s"))
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
    from ..render.markdown import md_escape

    return md_escape(s)


def render_markdown(result: dict) -> str:
    lines = [f"## cudadoctor smoke — {_md_cell(result.get('device'))}: **{_md_cell(str(result.get('status')).upper())}**", "",
             "| | stage | device | time (s) | result |", "|---|---|---|---:|---|"]
    for s in result.get("stages", []):
        lines.append(f"| {MARK.get(s['verdict'], '?')} | {_md_cell(s['name'])} | {_md_cell(s.get('device'))} | "
                     f"{s.get('duration_s', 0):.2f} | {_md_cell(s.get('message', ''))} |")
    nums = _numbers(result)
    if nums:
        lines += ["", "| | |", "|---|---|"] + [f"| {_md_cell(k)} | {_md_cell(v)} |" for k, v in nums]
    e = result.get("error")
    if e:
        from ..render.markdown import fence

        lines += ["", f"**Error ({_md_cell(e.get('kind'))}):**", "", fence(str(e.get("message")))]
        for d in e.get("diagnosis") or []:
            lines += ["", f"- `{d.get('code')}`: {_md_cell(d.get('title'))}"]
            if d.get("fix"):
                lines += ["", fence("\n".join(d["fix"]), "sh")]
        if e.get("kind") in ("crash", "timeout") and e.get("stderr_tail"):
            lines += ["", "<details><summary>last output of the workload</summary>", "", fence(e["stderr_tail"]),
                      "", "</details>"]
    return "\n".join(lines) + "\n"


def render_json(result: dict) -> str:
    return json.dumps(result, indent=2, default=str) + "\n"


def render(result: dict, fmt: str = "text") -> str:
    return {"text": render_text, "markdown": render_markdown, "json": render_json}[fmt](result)
