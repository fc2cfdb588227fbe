"""The learned fallback's scorer: a text classifier shipped as data, scored in pure Python.

``benchmarks/train_classifier.py`` trains a TF-IDF + multinomial logistic regression model with
scikit-learn on the labelled real texts (cases, holdout cases, error corpus) and exports it as
``cudadoctor/kb/models/classifier_model.json``. This module reads that file and gives, for any text, the
likely causes with their probabilities and the features that drove them, exactly as scikit-learn's
``predict_proba`` would (tests/test_learned.py checks it to 1e-6). No scikit-learn or numpy here.

The tokeniser below is *the* tokeniser: training passes :func:`features` to scikit-learn as its
analyzer, so the model and the scorer always cut text the same way. Changing it means retraining
(the model records :data:`TOKENIZER`, and :func:`load_model` refuses a model cut another way).
docs/learned.md says how the model was trained, its grouped cross-validation figures and how to retrain.
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

#: The version of :func:`features`; a model trained with another is refused.
TOKENIZER = "words+bigrams+char3-5/v1"
MODEL_PATH = Path(__file__).parent / "kb" / "models" / "classifier_model.json"
#: Text beyond this many characters (from the end: tracebacks end with what matters) is not read.
MAX_CHARS = 20000

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_HEX = re.compile(r"\b0x[0-9a-f]{4,}\b")
_WORD = re.compile(r"[a-z][a-z0-9_]*|[0-9]+")
#: Words not shown alone (or in pairs of them) among the words that drove a guess; they still count.
_FILLER = frozenset("a an and are as at be by for from has have in is it of on or that the this to was were with".split())


def words(text: str) -> List[str]:
    """The text's words: lower case, NFKC (full-width forms read as ASCII), ANSI colours and long hex
    addresses removed; a word is a letter followed by letters, digits or ``_`` (``sm_120``, ``cu118``,
    ``cudaerrorinsufficientdriver``), or a run of digits. One-letter words are dropped."""
    t = unicodedata.normalize("NFKC", text[-MAX_CHARS:]).lower()
    t = _HEX.sub(" hexaddr ", _ANSI.sub(" ", t))
    return [w for w in _WORD.findall(t) if len(w) > 1 or w.isdigit()]


def features(text: str) -> List[str]:
    """The features of ``text``: words (``w:``), pairs of neighbouring words (``b:``) and the 3- to
    5-character pieces of each word padded with a space at each end (``c:``, like scikit-learn's
    ``char_wb``), so that ``libcudnn_ops_infer`` and ``libcudnn_cnn_infer`` share pieces."""
    ws = words(text)
    out = [f"w:{w}" for w in ws]
    out += [f"b:{a} {b}" for a, b in zip(ws, ws[1:])]
    pieces: Dict[str, List[str]] = {}
    for w in ws:
        g = pieces.get(w)
        if g is None:
            p = f" {w} "
            g = pieces[w] = [f"c:{p[i : i + n]}" for n in (3, 4, 5) for i in range(len(p) - n + 1)]
        out += g
    return out


def _filler(feature: str) -> bool:
    """A word or pair of only filler words and numbers: it counts, but is not shown as a word that drove a guess."""
    return all(w in _FILLER or w.isdigit() for w in feature.split())


@dataclass(frozen=True)
class Guess:
    """One likely cause: its label (a catalogue code, ``healthy`` or ``uncatalogued``), its
    probability, and the features that pushed it up most (readable: words and word pairs first)."""

    label: str
    probability: float
    words: Tuple[str, ...]


@dataclass(frozen=True)
class Model:
    classes: Tuple[str, ...]
    vocabulary: Dict[str, int]
    idf: Tuple[float, ...]
    coef: Tuple[Tuple[float, ...], ...]  # one row per class
    intercept: Tuple[float, ...]
    threshold: float
    reportable: Tuple[str, ...]  # labels that are catalogue codes (not healthy / uncatalogued)
    meta: Dict[str, Any]

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Model":
        if d.get("tokenizer") != TOKENIZER:
            raise ValueError(f"classifier model was cut with tokenizer {d.get('tokenizer')!r}, this scorer uses {TOKENIZER!r}")
        vocab = list(d["vocabulary"])
        classes = tuple(d["classes"])
        coef = tuple(tuple(row) for row in d["coef"])
        if len(coef) != len(classes) or any(len(r) != len(vocab) for r in coef) or len(d["idf"]) != len(vocab):
            raise ValueError("classifier model: coef/idf shapes do not match the vocabulary and classes")
        return cls(
            classes=classes,
            vocabulary={f: i for i, f in enumerate(vocab)},
            idf=tuple(float(x) for x in d["idf"]),
            coef=coef,
            intercept=tuple(float(x) for x in d["intercept"]),
            threshold=float(d["threshold"]),
            reportable=tuple(d.get("reportable") or ()),
            meta={k: v for k, v in d.items() if k not in ("vocabulary", "idf", "coef", "intercept")},
        )

    def vector(self, text: str) -> Dict[int, float]:
        """TF-IDF of ``text`` over the vocabulary: sublinear tf (1 + ln tf) times idf, L2-normalised
        (scikit-learn's TfidfVectorizer with ``sublinear_tf=True``)."""
        counts: Dict[int, int] = {}
        for f in features(text):
            j = self.vocabulary.get(f)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        x = {j: (1.0 + math.log(n)) * self.idf[j] for j, n in counts.items()}
        norm = math.sqrt(sum(v * v for v in x.values()))
        return {j: v / norm for j, v in x.items()} if norm > 0 else {}

    def probabilities(self, text: str) -> Dict[str, float]:
        """Every class's probability (the softmax of the linear scores), as predict_proba gives it."""
        return dict(zip(self.classes, self._softmax(self._scores(self.vector(text)))))

    def _scores(self, x: Dict[int, float]) -> List[float]:
        return [b + sum(row[j] * v for j, v in x.items()) for row, b in zip(self.coef, self.intercept)]

    @staticmethod
    def _softmax(z: Sequence[float]) -> List[float]:
        m = max(z)
        e = [math.exp(v - m) for v in z]
        s = sum(e)
        return [v / s for v in e]

    def rank(self, text: str, top: int = 3, n_words: int = 6) -> List[Guess]:
        """The ``top`` most likely labels for ``text``, most likely first, each with the features
        that raised its score most relative to the average class (words and word pairs before
        character pieces, which are shown only when no word contributed)."""
        x = self.vector(text)
        if not x:
            return []
        probs = self._softmax(self._scores(x))
        order = sorted(range(len(self.classes)), key=lambda k: -probs[k])[:top]
        inv = {j: f for f, j in self.vocabulary.items() if j in x}
        n_cls = len(self.classes)
        out = []
        for k in order:
            contrib = []
            for j, v in x.items():
                mean = sum(row[j] for row in self.coef) / n_cls
                c = v * (self.coef[k][j] - mean)
                if c > 0:
                    contrib.append((c, inv[j]))
            contrib.sort(key=lambda t: -t[0])
            readable = [f[2:] for _, f in contrib if f[:2] in ("w:", "b:") and not _filler(f[2:])]
            if not readable:
                readable = [f[2:].strip() for _, f in contrib]
            out.append(Guess(self.classes[k], probs[k], tuple(dict.fromkeys(readable))[:n_words]))
        return out


@functools.lru_cache(maxsize=2)
def load_model(path: Optional[str] = None) -> Optional[Model]:
    """The shipped model (or the one at ``path``); None when the file is absent."""
    p = Path(path) if path else MODEL_PATH
    if not p.is_file():
        return None
    return Model.from_dict(json.loads(p.read_text(encoding="utf-8")))


def text_of(texts: Iterable[Tuple[str, str]]) -> str:
    """The one text the classifier reads from the facts' error texts (``errortext.sources.error_texts``):
    each text once, normalised by the engine's cleaner, in order, joined by new lines. Training reads cases through
    this same function."""
    from cudadoctor.errortext import normalize  # the one cleaner: a quoted, coloured or escaped copy reads the same

    return "\n".join(dict.fromkeys(normalize(t) for _where, t in texts if t and t.strip()))
