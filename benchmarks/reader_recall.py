"""How much of what a person recorded from a paste does the paste reader (`check --from-text`) read?

Every blind-batch case (tests/data/blind/bNN/) has the collector's recorded facts (`<id>.json` "facts": os, python,
torch, torch_cuda, is_cuda_available, cuda_runtime, gpus, driver, cudnn, packages, conda_packages, env) and the
reporter's verbatim paste (`<id>.paste.txt`). This reads each paste with the same reader `--from-text` uses
(readers/issue.py ``read``; no CLI round trip) and compares, per field, with the recorded value:

- normalised: versions by major.minor (torch's local tag dropped), the OS by family (Linux / Windows / macOS), GPU
  names by model (kb's GPU key: "NVIDIA GeForce RTX 4060 Laptop GPU" -> "rtx 4060"), the driver by number (one
  dotted version agrees with another that starts with it: "535" / "535.104.05"), packages and variables by name;
- a recorded null (not stated) is skipped; recall = read and agreeing / recorded; a *contradiction* is a value read
  that disagrees with the recorded one (precision = agreeing / (agreeing + contradicting)).

The collector read the whole thread, the reader only the paste: a fact the paste does not state cannot be read, so
recall below 100 % is expected; contradictions are the reader's own errors (or the collector's) and are listed.

    python benchmarks/reader_recall.py [tests/data/blind/b10 ...] [--worst 40] [--json OUT] [--field torch]

Sealed batches are never read: a batch folder is readable once it holds its frozen first-sight score
(`first-sight-<commit>.json`, written when the batch was scored first-sight and unsealed) or is on
train_classifier's allow-list (BLIND_READABLE); any other batch folder (one being collected) is sealed. Unsealing a
batch (committing its first-sight file) needs no code edit here.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

BLIND = REPO / "tests" / "data" / "blind"


def _allow_list() -> Tuple[str, ...]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from train_classifier import BLIND_READABLE

    return tuple(BLIND_READABLE)


def readable(folder: Path) -> bool:
    """Whether a blind batch folder may be read: its name is bNN and it holds a frozen first-sight score
    (first-sight-*.json), or train_classifier.BLIND_READABLE lists it. A folder that is not a batch (bNN under
    tests/data/blind) is read as given."""
    folder = Path(folder)
    if not re.fullmatch(r"b\d+", folder.name):
        return True
    return folder.name in _allow_list() or any(folder.glob("first-sight-*.json"))


def readable_batches() -> List[Path]:
    """Every readable batch folder under tests/data/blind, in order (b10, b11, ...)."""
    found = [p for p in BLIND.glob("b*") if p.is_dir() and re.fullmatch(r"b\d+", p.name) and readable(p)]
    return sorted(found, key=lambda p: int(p.name[1:]))


FIELDS = (
    "os",
    "python",
    "torch",
    "torch_cuda",
    "is_cuda_available",
    "cuda_runtime",
    "gpus",
    "driver",
    "cudnn",
    "packages",
    "conda_packages",
    "env",
)


def _mm(v: Any) -> Optional[str]:
    m = re.match(r"\s*v?(\d+)(?:\.(\d+))?", str(v))
    if not m:
        return None
    return f"{int(m.group(1))}.{int(m.group(2) or 0)}"


def _os_family(v: Any) -> Optional[str]:
    s = str(v).lower()
    if "wsl" in s or "linux" in s:
        return "Linux"
    if "win" in s:
        return "Windows"
    if "mac" in s or "darwin" in s or "osx" in s:
        return "macOS"
    if re.search(r"ubuntu|debian|centos|fedora|rhel|red hat|rocky|alma|arch|manjaro|mint|suse|pop|nixos|colab|kali", s):
        return "Linux"
    return None


def _cudnn(v: Any) -> Optional[str]:
    s = str(v).strip()
    if re.fullmatch(r"\d{4,5}", s):  # cudnnGetVersion(): 8600 = 8.6.0, 90100 = 9.1.0
        n = int(s)
        return f"{n // 10000}.{n // 100 % 100}" if n >= 90000 else f"{n // 1000}.{n // 100 % 10}"
    if re.fullmatch(r"\d+", s):
        return s  # a major alone
    return _mm(s)


def _driver_agree(a: str, b: str) -> bool:
    x, y = str(a).split("."), str(b).split(".")
    n = min(len(x), len(y))
    return [int(t) for t in x[:n] if t.isdigit()] == [int(t) for t in y[:n] if t.isdigit()]


def _gpu_key(name: str) -> str:
    """The model: kb's GPU key with spaces and the family word dropped ("RTX3060" / "RTX 3060", "GTX 980TI" /
    "GTX 980 Ti"); a memory size is no part of the model ("GTX 860M 4GB")."""
    from cudadoctor import kb

    k = re.sub(r"\b\d+\s*gb\b", "", kb._norm_gpu(name))
    return re.sub(r"\b(?:rtx|gtx|gt|geforce|nvidia)\b|\s+", "", k)


def _pkg(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.lower())


def read_paste(text: str) -> Dict[str, Any]:
    """The facts `check --from-text` builds from the paste, as this benchmark's fields."""
    from cudadoctor.readers import issue

    f = issue.read(text)["facts"]
    sysd = f.get("system") or {}
    t = f.get("torch") or {}
    tk = f.get("toolkit") or {}
    nv = f.get("nvml") or {}
    out: Dict[str, Any] = {}
    os_name = sysd.get("os")
    if os_name:
        out["os"] = {"Darwin": "macOS"}.get(os_name, os_name)
    if (f.get("python") or {}).get("version"):
        out["python"] = f["python"]["version"]
    if t.get("version"):
        out["torch"] = t["version"]
    if "cuda" in t:
        out["torch_cuda"] = t["cuda"] if t["cuda"] else "cpu"
    if isinstance(t.get("cuda_available"), bool):
        out["is_cuda_available"] = t["cuda_available"]
    if tk.get("nvcc_version"):
        out["cuda_runtime"] = tk["nvcc_version"]
    names = [d.get("name") for d in (nv.get("devices") or []) + (t.get("devices") or []) if d.get("name")]
    if names:
        out["gpus"] = names
    if nv.get("driver_version"):
        out["driver"] = nv["driver_version"]
    cud = [e.get("version") for e in tk.get("system_cudnn") or [] if e.get("version")]
    if t.get("cudnn_version"):
        cud.insert(0, t["cudnn_version"])
    if cud:
        out["cudnn"] = cud
    dists = (f.get("packages") or {}).get("distributions") or []
    if dists:
        out["packages"] = {_pkg(d["name"]): d.get("version") for d in dists if d.get("name")}
    ev = (f.get("environment") or {}).get("vars") or {}
    if ev:
        out["env"] = ev
    return out


def compare(field: str, want: Any, got: Any) -> Tuple[int, int, int, List[str]]:
    """(recorded, agreeing, contradicting, notes) for one field of one case."""
    if field in ("packages", "conda_packages", "env"):
        want = want or {}
        if not want:
            return 0, 0, 0, []
        got = got or {}
        have = {_pkg(k) if field != "env" else k: v for k, v in got.items()}
        rec = agree = bad = 0
        notes = []
        for k, v in want.items():
            rec += 1
            key = _pkg(k) if field != "env" else k
            if key not in have:
                notes.append(f"{k} not read")
                continue
            if field == "env" or v in (None, "") or have[key] in (None, ""):
                ok = field != "env" or str(have[key]).strip() == str(v).strip()
            else:
                ok = _mm(v) == _mm(have[key])
            if ok:
                agree += 1
            else:
                bad += 1
                notes.append(f"{k}: recorded {v!r}, read {have[key]!r}")
        return rec, agree, bad, notes
    if want in (None, "", []):
        return 0, 0, 0, []
    if got in (None, "", []):
        return 1, 0, 0, [f"recorded {want!r}, not read"]
    if field == "gpus":
        wk = {_gpu_key(w) for w in want}
        gk = {_gpu_key(g) for g in got}
        ok = bool(wk & gk) or any(a in b or b in a for a in wk for b in gk if a and b)
    elif field == "os":
        ok = _os_family(want) is None or _os_family(want) == _os_family(got)
    elif field == "driver":
        ok = _driver_agree(str(want), str(got))
    elif field == "is_cuda_available":
        ok = bool(want) == bool(got)
    elif field == "cudnn":
        w = _cudnn(want)
        ok = any(_cudnn(g) == w or (w and "." not in w and str(_cudnn(g)).split(".")[0] == w) for g in got)
    elif field == "torch_cuda" and got == "cpu":
        ok = False
    else:
        ok = _mm(want) == _mm(got)
    return 1, int(ok), int(not ok), [] if ok else [f"recorded {want!r}, read {got!r}"]


def stated(field: str, want: Any, text: str) -> bool:
    """Does the paste write the recorded value at all (its digits, its name)? A rough test: a fact the collector took
    from elsewhere in the thread cannot be read from the paste."""
    low = text.lower()
    if field in ("packages", "conda_packages", "env"):
        return any(str(k).lower() in low for k in (want or {}))
    if field == "gpus":
        return any(re.sub(r"\D", "", _gpu_key(w)) and re.sub(r"\D", "", _gpu_key(w)) in low for w in want)
    if field == "os":
        fam = _os_family(want)
        words = {
            "Linux": r"linux|ubuntu|debian|centos|fedora|arch|wsl|colab|nixos|mint|suse|rhel|rocky|alma|docker",
            "Windows": r"win",
            "macOS": r"mac|darwin|osx",
        }.get(fam or "", "")
        return bool(words and re.search(words, low))
    if field == "is_cuda_available":
        return "is_available" in low or "cuda available" in low or "cuda_available" in low
    if field == "cudnn":
        w = _cudnn(want) or ""
        return "cudnn" in low and w.split(".")[0] in low
    v = str(want)
    mm = _mm(v) or v
    return v.lower() in low or mm in low or mm.replace(".", "") in low


def cases(folders: List[Path]) -> List[Tuple[Path, Dict[str, Any]]]:
    out = []
    for folder in folders:
        if not readable(folder):
            continue
        for j in sorted(folder.glob("b*-*.json")):
            case = json.loads(j.read_text(encoding="utf-8"))
            if not isinstance(case, dict) or "facts" not in case:
                continue
            paste = j.with_name(j.name[: -len(".json")] + ".paste.txt")
            if paste.exists():
                out.append((paste, case))
    return out


def measure(folders: List[Path]) -> Dict[str, Any]:
    per: Dict[str, Dict[str, int]] = {
        f: {"recorded": 0, "agree": 0, "contradict": 0, "stated": 0, "stated_agree": 0, "unrecorded": 0} for f in FIELDS
    }
    rows: List[Dict[str, Any]] = []
    for paste, case in cases(folders):
        text = paste.read_text(encoding="utf-8", errors="replace")
        got = read_paste(text)
        want = case["facts"]
        for field in FIELDS:
            g = got.get("packages") if field == "conda_packages" else got.get(field)
            rec, agree, bad, notes = compare(field, want.get(field), g)
            s = per[field]
            if not rec and g not in (None, "", [], {}) and field not in ("packages", "conda_packages", "env"):
                s["unrecorded"] += 1  # read where the collector recorded nothing: neither right nor wrong here
            s["recorded"] += rec
            s["agree"] += agree
            s["contradict"] += bad
            said = bool(rec) and stated(field, want.get(field), text)
            if said:
                s["stated"] += rec
                s["stated_agree"] += agree
            if notes:
                rows.append(
                    {
                        "id": case["id"],
                        "field": field,
                        "missed": rec - agree - bad,
                        "contradict": bad,
                        "stated": said,
                        "notes": notes,
                    }
                )
    return {"cases": len(cases(folders)), "fields": per, "misses": rows}


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f} %" if b else "   -   "


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--worst", type=int, default=30, help="list this many misses (contradictions, then values the paste writes)")
    ap.add_argument("--field", help="list the misses of this field only")
    ap.add_argument("--json", type=Path, help="write the figures and every miss here")
    a = ap.parse_args(argv)
    folders = a.folders or readable_batches()
    r = measure(folders)
    print(f"{r['cases']} cases ({', '.join(p.name for p in folders)})")
    print(
        f"{'field':<18} {'recorded':>8} {'read ok':>8} {'wrong':>6} {'recall':>8} {'precision':>9} {'in paste':>8} {'recall':>8}"
        f" {'unrecorded':>10}"
    )
    tot = {"recorded": 0, "agree": 0, "contradict": 0, "stated": 0, "stated_agree": 0, "unrecorded": 0}
    for field, s in r["fields"].items():
        for k in tot:
            tot[k] += s[k]
        print(
            f"{field:<18} {s['recorded']:>8} {s['agree']:>8} {s['contradict']:>6} {_pct(s['agree'], s['recorded']):>8} "
            f"{_pct(s['agree'], s['agree'] + s['contradict']):>9} {s['stated']:>8} {_pct(s['stated_agree'], s['stated']):>8}"
            f" {s['unrecorded']:>10}"
        )
    print(
        f"{'all':<18} {tot['recorded']:>8} {tot['agree']:>8} {tot['contradict']:>6} {_pct(tot['agree'], tot['recorded']):>8} "
        f"{_pct(tot['agree'], tot['agree'] + tot['contradict']):>9} {tot['stated']:>8} {_pct(tot['stated_agree'], tot['stated']):>8}"
        f" {tot['unrecorded']:>10}"
    )
    print(
        "(recall: of every recorded value; 'in paste': the recorded values whose digits or name the paste writes;\n"
        " unrecorded: values read where the collector recorded none, right or wrong unknown)"
    )
    rows = [m for m in r["misses"] if not a.field or m["field"] == a.field]
    rows.sort(key=lambda m: (-m["contradict"], not m["stated"], m["field"], m["id"]))
    if a.worst and rows:
        print(f"\nmisses ({len(rows)}; contradictions first):")
        for m in rows[: a.worst]:
            print(
                f"  {'WRONG' if m['contradict'] else 'miss ' if m['stated'] else 'unsaid'} {m['field']:<16} {m['id'][:48]:<48} {'; '.join(m['notes'])[:160]}"
            )
    if a.json:
        a.json.write_text(json.dumps(r, indent=1, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
