"""`cudadoctor kb`: the knowledge base tables with their sources and dates, as text or JSON."""

from __future__ import annotations

from typing import Any, Dict, List

from ..document import dumps, envelope


def render_kb(kb_date: Any, newest: Any, tables: Dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return dumps(envelope("cudadoctor-kb", {"kb_date": kb_date, "tables": tables}))
    out: List[str] = [f"knowledge base {kb_date} (newest release known: torch {newest})"]
    for name, t in tables.items():
        out.append(f"\n{name}  (checked {t.get('checked')})")
        for s in t.get("sources") or []:
            out.append(f"    {s.get('title', '')}: {s.get('url', '')}")
    out.append('\nAsk the tables: cudadoctor kb driver 12.8 | kb arch sm_120 | kb pair torch 2.6 | kb gpu "RTX 4090"')
    return "\n".join(out) + "\n"


def _wheels_text(wheels: List[Dict[str, Any]]) -> List[str]:
    """(release, variant, runs) rows grouped per release, newest first: '2.15  cu132 cu130 (ptx: cu126)'."""
    out: List[str] = []
    by: Dict[str, List[Dict[str, Any]]] = {}
    for w in wheels:
        by.setdefault(w["release"], []).append(w)
    for rel, ws in by.items():
        sass = [w["variant"] for w in ws if w["runs"] == "sass"]
        ptx = [w["variant"] for w in ws if w["runs"] == "ptx"]
        out.append(f"    torch {rel:<6} " + " ".join(sass) + (f"  (by PTX JIT: {' '.join(ptx)})" if ptx else ""))
    return out


def _answer_text(a: Dict[str, Any]) -> List[str]:
    q = a["question"]
    if q == "driver" and "driver" in a:
        return [
            f"NVIDIA driver {a['driver']} (branch R{a['branch']}): CUDA {a['cuda']} (what nvidia-smi prints)",
            "PyTorch wheel variants it runs (Linux): " + (" ".join(a["torch_variants_it_runs"]) or "none"),
            "too new for it: " + (" ".join(a["torch_variants_too_new"]) or "none"),
        ]
    if q == "driver":
        out = [f"CUDA {a['cuda']}: minimum NVIDIA driver"]
        floor, tk = a["minor_compat_min_driver"], a["toolkit_driver"]
        if floor:
            out.append(
                f"    to run a PyTorch wheel ({a['torch_variant']}, minor-version compatibility): Linux >= {floor['linux']}, Windows >= {floor['windows']}"
            )
        if tk:
            out.append(
                f"    bundled with the CUDA {a['cuda']} toolkit: Linux {tk['linux'] or 'n/a'}, Windows {tk['windows'] or 'n/a'}"
            )
        if a["native_branch"]:
            out.append(f"    first driver branch whose nvidia-smi says CUDA >= {a['cuda']}: R{a['native_branch']}")
        rel = a["torch_releases"]
        out.append(f"PyTorch releases with {a['torch_variant']} wheels: " + (", ".join(rel) if rel else "none known"))
        return out
    if q == "arch":
        out = [
            f"{a['arch']} (compute capability {a['capability']})"
            + (f", {a['cores_per_sm']} CUDA cores per SM" if a["cores_per_sm"] else "")
        ]
        gpus = a["gpus"]
        out.append(
            "GPUs: "
            + (", ".join(gpus[:8]) + (f" and {len(gpus) - 8} more" if len(gpus) > 8 else "") if gpus else "none in the table")
        )
        out.append("Official Linux x86_64 wheels that run it:" if a["wheels"] else "No known official wheel runs it.")
        return out + _wheels_text(a["wheels"])
    if q == "pair":
        py = a["python"]
        return [
            f"torch {a['torch']}  torchvision {a['torchvision'] or 'none'}  torchaudio {a['torchaudio'] or 'none'}  (released {a['date'] or 'on a date the table lacks'})",
            f"Python {py.get('min')} to {py.get('max')}; wheel variants: {' '.join(a['variants'])}; "
            f"plain `pip install torch` on Linux x86_64 gets {a['default_variant'].get('linux-x86_64')}",
        ]
    if q == "gpu":
        out = [
            f"{a['gpu']}: compute capability {a['capability']} ({a['arch']})"
            + (f", {a['cores_per_sm']} CUDA cores per SM" if a["cores_per_sm"] else "")
        ]
        out.append("Official Linux x86_64 wheels that run it:" if a["wheels"] else "No known official wheel runs it.")
        return out + _wheels_text(a["wheels"])
    raise ValueError(f"unknown kb question {q!r}")


def render_answer(answer: Dict[str, Any], fmt: str) -> str:
    """One answer of cudadoctor/kb/answers.py: text (the answer, then the tables it read) or JSON."""
    if fmt == "json":
        return dumps(envelope("cudadoctor-kb-answer", answer))
    out = _answer_text(answer)
    tables = ", ".join(f"{t['table']} (checked {t['checked']})" for t in answer.get("tables") or [])
    out.append(f"(from the tables {tables}; their sources: `cudadoctor kb`, notes: --format json)")
    return "\n".join(out) + "\n"
