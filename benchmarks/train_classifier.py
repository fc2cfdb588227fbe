"""Train the learned fallback (cudadoctor/learned.py) on every labelled real text, measure it with
cross-validation grouped by thread, and export it as cudadoctor/kb/models/classifier_model.json.

    python benchmarks/train_classifier.py            # train, cross-validate, write the model
    python benchmarks/train_classifier.py --cv-only  # only the figures

Needs scikit-learn (the `test` extra); the shipped model is scored without it. See docs/learned.md.

Data (each text is what `check` gives the classifier: the error texts in the facts, read through
the same readers and cudadoctor.learned.text_of):
- ../shared/cases and tests/data/holdout_cases: `<id>.txt` read as collect_env plus `<id>.error.txt`;
- tests/data/error_corpus/*.jsonl: each text as the user's error;
- tests/data/blind/b10 when present (both its forms: collect_env + error line, and the verbatim paste).
  and b11 (scored, then unsealed); the later blind batches are never read.
Labels: the case's code; `healthy`; `uncatalogued:NAME` as NAME once the catalogue has that code, else as
`uncatalogued` (never reported).
Group: the thread (source URL without fragment), so no thread is in both a fold's training and test sets.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import json
import math
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cudadoctor import learned  # noqa: E402

SHARED_CASES = REPO.parent / "shared" / "cases"
HOLDOUT = REPO / "tests" / "data" / "holdout_cases"
CORPUS = REPO / "tests" / "data" / "error_corpus"
#: Blind batches that may be trained on (scored first-sight and frozen, then unsealed). b12 is sealed: never listed here.
BLIND_READABLE = ("b10", "b11")
BLIND = REPO / "tests" / "data" / "blind"
NOT_REPORTED = ("healthy", "uncatalogued")

#: Model settings (docs/learned.md): features seen in at least MIN_GROUPS threads, the K best by chi2, L2 strength C.
MIN_GROUPS = 2
K_FEATURES = 2000
C = 10.0
N_SPLITS = 5
#: The threshold is the lowest confidence at which the fallback's grouped-CV precision reaches this.
TARGET_PRECISION = 0.8
DIGITS = 9  # significant digits kept in the exported floats


@dataclass(frozen=True)
class Sample:
    text: str
    label: str
    group: str
    origin: str  # where it came from: shared/<id>, holdout/<id>, corpus/<file>:<line>, b10/<id>[:paste]


def _group(url: str) -> str:
    return re.sub(r"[#?].*$", "", (url or "").strip()).rstrip("/").lower() or "?"


@functools.lru_cache(maxsize=1)
def _codes() -> frozenset:
    from cudadoctor import registry

    return frozenset(registry.load(plugins=False).codes)


def _label(label: str) -> str:
    """The case's label; `uncatalogued:NAME` is NAME once the catalogue has that code, else `uncatalogued`."""
    if label.startswith("uncatalogued"):
        name = label.partition(":")[2]
        return name if name in _codes() else "uncatalogued"
    return label


def _text_from_facts(facts: Dict[str, Any]) -> str:
    from cudadoctor.errortext.sources import error_texts
    from cudadoctor.facts import Facts

    return learned.text_of(error_texts(Facts(facts)))


def _read_case(stem: Path, paste: bool = False) -> Dict[str, Any]:
    """The facts `check --from-collect-env STEM.txt --error-file STEM.error.txt` reads, or with ``paste``
    those of `check --from-text STEM.paste.txt` ({} when a reader refuses the text)."""
    from cudadoctor.commands.check import attach_error
    from cudadoctor.facts import FactsError
    from cudadoctor.readers import issue
    from cudadoctor.readers.collect_env import parse_collect_env

    if paste:
        try:
            return issue.read(Path(f"{stem}.paste.txt").read_text(encoding="utf-8", errors="replace"))["facts"]
        except FactsError:
            return {}
    try:
        facts = parse_collect_env(Path(f"{stem}.txt").read_text(encoding="utf-8", errors="replace"))
    except FactsError:
        facts = {}
    err = Path(f"{stem}.error.txt")
    if err.is_file():
        attach_error(facts, err.read_text(encoding="utf-8", errors="replace"))
    return facts


def error_text(text: str) -> str:
    """What `check --error-file` with this text alone gives the classifier."""
    from cudadoctor.commands.check import attach_error
    from cudadoctor.facts import new_facts

    facts = new_facts("collect_env")
    attach_error(facts, text)
    return _text_from_facts(facts)


def _cases(folder: Path, tag: str, pastes: bool = False) -> List[Sample]:
    out = []
    for j in sorted(folder.glob("*.json")):
        stem = str(j)[: -len(".json")]
        if not Path(stem + ".txt").is_file():  # a case is a json with its collect_env text beside it (not first-sight.json)
            continue
        case = json.loads(j.read_text(encoding="utf-8"))
        label, group = _label(case["label"]), _group(case.get("source", ""))
        t = _text_from_facts(_read_case(Path(stem)))
        if t.strip():
            out.append(Sample(t, label, group, f"{tag}/{j.stem}"))
        if pastes and Path(stem + ".paste.txt").is_file():
            t = _text_from_facts(_read_case(Path(stem), paste=True))
            if t.strip():
                out.append(Sample(t, label, group, f"{tag}/{j.stem}:paste"))
    return out


def load_samples() -> List[Sample]:
    samples: List[Sample] = []
    if SHARED_CASES.is_dir():
        samples += _cases(SHARED_CASES, "shared")
    samples += _cases(HOLDOUT, "holdout")
    for f in sorted(CORPUS.glob("*.jsonl")):
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                d = json.loads(line)
                t = error_text(d["text"])
                if t.strip():
                    samples.append(Sample(t, _label(d["code"]), _group(d.get("source", "")), f"corpus/{f.name}:{i}"))
    for b in BLIND_READABLE:
        if (BLIND / b).is_dir():
            samples += _cases(BLIND / b, b, pastes=True)
    return samples


# ---------------------------------------------------------------- the model


def fit(texts: Sequence[str], labels: Sequence[str], groups: Sequence[str], k: int = K_FEATURES, c: float = C):
    """Vocabulary (features in >= MIN_GROUPS threads, then the k best by chi2), TF-IDF, logistic regression."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.feature_selection import chi2
    from sklearn.linear_model import LogisticRegression

    present = CountVectorizer(analyzer=learned.features, binary=True).fit(texts)
    m = present.transform(texts).tocsc()
    names = present.get_feature_names_out()
    gidx = {g: i for i, g in enumerate(sorted(set(groups)))}
    grow = [gidx[g] for g in groups]
    keep = []
    for j in range(m.shape[1]):
        rows = m.indices[m.indptr[j] : m.indptr[j + 1]]
        if len({grow[r] for r in rows}) >= MIN_GROUPS:
            keep.append(names[j])
    tf = TfidfVectorizer(analyzer=learned.features, vocabulary=keep, sublinear_tf=True)
    x = tf.fit_transform(texts)
    if len(keep) > k:
        score, _p = chi2(x, labels)
        score = [0.0 if math.isnan(s) else float(s) for s in score]
        best = sorted(range(len(keep)), key=lambda j: (-score[j], keep[j]))[:k]
        keep = sorted(keep[j] for j in best)
        tf = TfidfVectorizer(analyzer=learned.features, vocabulary=keep, sublinear_tf=True)
        x = tf.fit_transform(texts)
    lr = LogisticRegression(C=c, max_iter=5000)
    lr.fit(x, labels)
    return tf, lr


def export(tf, lr, threshold: float, extra: Dict[str, Any]) -> Dict[str, Any]:
    """The model as data (rounded to DIGITS significant digits) in cudadoctor.learned.Model's format."""
    vocab = sorted(tf.vocabulary_, key=tf.vocabulary_.get)

    def r(v: float) -> float:
        return float(f"{v:.{DIGITS}g}")

    classes = [str(c) for c in lr.classes_]
    return {
        "tokenizer": learned.TOKENIZER,
        "classes": classes,
        "reportable": [c for c in classes if c not in NOT_REPORTED],
        "threshold": threshold,
        **extra,
        "vocabulary": vocab,
        "idf": [r(v) for v in tf.idf_],
        "intercept": [r(v) for v in lr.intercept_],
        "coef": [[r(v) for v in row] for row in lr.coef_],
    }


# ---------------------------------------------------------------- grouped cross-validation


def cross_validate(samples: Sequence[Sample], k: int = K_FEATURES, c: float = C) -> List[Dict[str, float]]:
    """Out-of-fold probabilities for every sample (GroupKFold by thread): one {label: p} per sample."""
    from sklearn.model_selection import GroupKFold

    texts = [s.text for s in samples]
    labels = [s.label for s in samples]
    groups = [s.group for s in samples]
    oof: List[Dict[str, float]] = [{} for _ in samples]
    for train, test in GroupKFold(n_splits=N_SPLITS).split(texts, labels, groups):
        tf, lr = fit([texts[i] for i in train], [labels[i] for i in train], [groups[i] for i in train], k, c)
        proba = lr.predict_proba(tf.transform([texts[i] for i in test]))
        for i, row in zip(test, proba):
            oof[i] = {str(cl): float(p) for cl, p in zip(lr.classes_, row)}
    return oof


def figures(
    samples: Sequence[Sample], oof: Sequence[Dict[str, float]], threshold: float, only: Optional[Sequence[Optional[set]]] = None
) -> Dict[str, Any]:
    """Accuracy, top-3 accuracy, and at ``threshold``: how many texts get a guess reported, the precision of
    those guesses, the share of texts with a catalogued cause that get it right, healthy texts flagged.
    ``only``: per sample, None to leave it out, else the codes a guess may not be (rules_silent)."""
    n = top1 = top3 = 0
    said = said_right = 0
    reportable_truth = caught = 0
    healthy = healthy_flagged = 0
    for i, (s, p) in enumerate(zip(samples, oof)):
        if only is not None and only[i] is None:
            continue
        veto = only[i] if only is not None else None
        n += 1
        ranked = sorted(p, key=lambda k: -p[k])
        top1 += ranked[:1] == [s.label]
        top3 += s.label in ranked[:3]
        guess = ranked[0]
        fires = guess not in NOT_REPORTED and p[guess] >= threshold and not (veto and guess in veto)
        said += fires
        said_right += fires and guess == s.label
        if s.label not in NOT_REPORTED:
            reportable_truth += 1
            caught += fires and guess == s.label
        if s.label == "healthy":
            healthy += 1
            healthy_flagged += fires
    return {
        "samples": n,
        "accuracy": round(top1 / n, 4) if n else None,
        "top3_accuracy": round(top3 / n, 4) if n else None,
        "threshold": threshold,
        "reported": said,
        "precision_at_threshold": round(said_right / said, 4) if said else None,
        "recall_at_threshold": round(caught / reportable_truth, 4) if reportable_truth else None,
        "healthy_texts": healthy,
        "healthy_texts_flagged": healthy_flagged,
    }


def rules_silent(samples: Sequence[Sample]) -> List[Optional[set]]:
    """For each sample, None when the rules (every check but the fallbacks, and the error-text engine) make an
    error or warning finding on the facts it came from; else the codes they judged (the engine's top cause, any
    info finding's code), which the fallback may not report. Not None: where the fallback would speak."""
    from cudadoctor import registry
    from cudadoctor.checks.learned import judged
    from cudadoctor.report import diagnose

    reg = registry.load(plugins=False)
    reg.checks = [c for c in reg.checks if not c.fallback]
    out: List[Optional[set]] = []
    for s in samples:
        r = diagnose(_facts_of(s), reg)
        if any(f.severity in ("error", "warning") for f in r.findings):
            out.append(None)
        else:
            out.append({f.code for f in r.findings} | set(judged(r.facts, (r.extra or {}).get("diagnosis"))))
    return out


def _facts_of(s: Sample) -> Dict[str, Any]:
    tag, _, rest = s.origin.partition("/")
    if tag == "corpus":
        from cudadoctor.commands.check import attach_error
        from cudadoctor.facts import new_facts

        facts = new_facts("collect_env")
        attach_error(facts, s.text)
        return facts
    folder = {"shared": SHARED_CASES, "holdout": HOLDOUT}.get(tag) or (BLIND / tag)
    case_id, _, form = rest.partition(":")
    stem = folder / case_id
    return _read_case(stem, paste=form == "paste")


def choose_threshold(samples: Sequence[Sample], oof: Sequence[Dict[str, float]]) -> float:
    """The lowest threshold (0.30, 0.35, ... 0.95) whose grouped-CV precision reaches TARGET_PRECISION
    with no healthy text flagged; 0.95 when none does."""
    for t100 in range(30, 100, 5):
        t = t100 / 100
        f = figures(samples, oof, t)
        if f["reported"] and f["precision_at_threshold"] >= TARGET_PRECISION and f["healthy_texts_flagged"] == 0:
            return t
    return 0.95


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cv-only", action="store_true", help="print the grouped-CV figures; write nothing")
    ap.add_argument("--out", default=str(learned.MODEL_PATH), help="where to write the model (default: the shipped one)")
    ap.add_argument("--k", type=int, default=K_FEATURES)
    ap.add_argument("--c", type=float, default=C)
    args = ap.parse_args(argv)
    import sklearn

    samples = load_samples()
    by_origin = Counter(s.origin.split("/")[0] for s in samples)
    print(f"{len(samples)} texts from {len({s.group for s in samples})} threads: {dict(by_origin)}", file=sys.stderr)
    oof = cross_validate(samples, args.k, args.c)
    threshold = choose_threshold(samples, oof)
    cv = figures(samples, oof, threshold)
    cv["folds"] = N_SPLITS
    cv["grouped_by"] = "thread (source URL)"
    silent = rules_silent(samples)
    cv_silent = figures(samples, oof, threshold, silent)
    per_threshold = {
        f"{t / 100:.2f}": {"all": figures(samples, oof, t / 100), "rules_silent": figures(samples, oof, t / 100, silent)}
        for t in range(30, 100, 10)
    }
    by_label: Dict[str, List[int]] = {}
    for smp, p in zip(samples, oof):
        n_right = by_label.setdefault(smp.label, [0, 0])
        n_right[0] += 1
        n_right[1] += max(p, key=lambda k: p[k]) == smp.label
    weakest = {k: f"{r}/{n}" for k, (n, r) in sorted(by_label.items(), key=lambda kv: (kv[1][1] / kv[1][0], -kv[1][0]))}
    print(
        json.dumps({"cv": cv, "cv_where_rules_silent": cv_silent, "by_threshold": per_threshold, "by_label": weakest}, indent=1)
    )
    if args.cv_only:
        return 0
    tf, lr = fit([s.text for s in samples], [s.label for s in samples], [s.group for s in samples], args.k, args.c)
    per_label = defaultdict(int)
    for s in samples:
        per_label[s.label] += 1
    model = export(
        tf,
        lr,
        threshold,
        {
            "trained_at": _dt.date.today().isoformat(),
            "trained_with": f"scikit-learn {sklearn.__version__}: TfidfVectorizer(analyzer=cudadoctor.learned.features, "
            f"sublinear_tf=True) over features seen in >= {MIN_GROUPS} threads, the {args.k} best by chi2; "
            f"LogisticRegression(C={args.c}, lbfgs, multinomial)",
            "retrain": "python benchmarks/train_classifier.py",
            "cv": cv,
            "cv_where_rules_silent": cv_silent,
            "data": {
                "texts": len(samples),
                "threads": len({s.group for s in samples}),
                "by_source": dict(sorted(by_origin.items())),
                "by_label": dict(sorted(per_label.items())),
                "sources": ["../shared/cases", "tests/data/holdout_cases", "tests/data/error_corpus"]
                + [f"tests/data/blind/{b}" for b in BLIND_READABLE if (BLIND / b).is_dir()],
            },
        },
    )
    text = json.dumps(model, separators=(",", ":"), sort_keys=False) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    print(
        f"wrote {args.out}: {len(text) / 1e6:.2f} MB, {len(model['vocabulary'])} features, {len(model['classes'])} classes",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
