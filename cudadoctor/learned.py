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
TOKENIZER = "words+bigrams+char3-5+facts/v2"
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
    ``char_wb``), so that ``libcudnn_ops_infer`` and ``libcudnn_cnn_infer`` share pieces.
    The stated facts (:func:`fact_tokens`, words beginning ``cdfact_``) are features of their own (``f:``),
    never paired or cut into pieces."""
    all_words = words(text)
    ws = [w for w in all_words if not w.startswith(FACT_PREFIX)]
    facts = [f"f:{w[len(FACT_PREFIX) :]}" for w in dict.fromkeys(all_words) if w.startswith(FACT_PREFIX)]
    out = [f"w:{w}" for w in ws]
    out += [f"b:{a} {b}" for a, b in zip(ws, ws[1:])]
    pieces: Dict[str, List[str]] = {}
    for w in ws:
        g = pieces.get(w)
        if g is None:
            p = f" {w} "
            g = pieces[w] = [f"c:{p[i : i + n]}" for n in (3, 4, 5) for i in range(len(p) - n + 1)]
        out += g
    return out + facts


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
            readable = [
                f[2:] if f[:2] != "f:" else f"(fact) {f[2:]}"
                for _, f in contrib
                if (f[:2] in ("w:", "b:") and not _filler(f[2:])) or f[:2] == "f:"
            ]
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


def text_of(texts: Iterable[Tuple[str, str]], facts: Optional[Dict[str, Any]] = None) -> str:
    """The one text the classifier reads: the facts' error texts (``errortext.sources.error_texts``), each once,
    normalised by the engine's cleaner, in order, joined by new lines; with ``facts``, a last line of the stated
    facts' tokens (:func:`fact_tokens`). Empty when there is no error text and the facts are not a report
    (a live run with nothing failing is not guessed about). Training reads cases through this same function."""
    from cudadoctor.errortext import normalize  # the one cleaner: a quoted, coloured or escaped copy reads the same

    body = "\n".join(dict.fromkeys(normalize(t) for _where, t in texts if t and t.strip()))
    if facts is None:
        return body
    if not body.strip() and str(facts.get("origin") or "") not in REPORT_ORIGINS:
        return ""
    return (body + "\n" if body else "") + " ".join(FACT_PREFIX + t for t in fact_tokens(facts))


#: Words of the facts line (:func:`text_of`): the tokenizer reads them as facts, not words.
FACT_PREFIX = "cdfact_"
#: The facts' origins that are someone's report (a paste, a collect_env text), guessed about even without an error text.
REPORT_ORIGINS = ("text", "collect_env")
#: Packages whose presence says something about the cause (another framework, a package with its own CUDA kernels).
FACT_PACKAGES = {
    "onnxruntime": "onnxruntime",
    "onnxruntime-gpu": "onnxruntime",
    "tensorflow": "tensorflow",
    "tensorflow-gpu": "tensorflow",
    "jax": "jax",
    "jaxlib": "jax",
    "mmcv": "mmcv",
    "mmcv-full": "mmcv",
    "cupy": "cupy",
    "llama-cpp-python": "llamacpp",
    "xformers": "xformers",
    "bitsandbytes": "bitsandbytes",
    "flash-attn": "flashattn",
    "vllm": "vllm",
    "triton": "triton",
    "paddlepaddle": "paddle",
    "paddlepaddle-gpu": "paddle",
    "cpuonly": "cpuonly",
    "torchvision": "torchvision",
    "detectron2": "detectron2",
    "numba": "numba",
}


def fact_tokens(facts: Dict[str, Any]) -> List[str]:
    """The stated facts as tokens: where the report came from, OS family, WSL, container, an NVIDIA GPU
    (and its compute capability's major number when known), the driver and NVML's status, the torch build
    (cpu / cuda / unknown, or not installed), whether CUDA is available, the packages of :data:`FACT_PACKAGES`
    present, NVIDIA's pip wheels, nvcc, the kinds of pasted parts (requirements, conda env files...).
    Unknown is a value of its own: a thin report is a fact too."""
    from cudadoctor.facts import Facts, normalize_name
    import importlib

    _gpus = importlib.import_module("cudadoctor.interpret.gpus")  # the package exports a function of that name

    fx = Facts(facts)
    out = [f"origin_{re.sub(r'[^a-z]', '', str(facts.get('origin') or 'unknown').lower()) or 'unknown'}"]
    os_name = (fx.str("system.os") or "").lower()
    out.append(
        "os_windows"
        if "windows" in os_name
        else "os_macos"
        if "darwin" in os_name or "mac" in os_name
        else "os_linux"
        if os_name
        else "os_unknown"
    )
    kernel = (fx.str("system.kernel") or "").lower()
    if fx.bool("system.wsl") or "microsoft" in kernel or "wsl" in kernel:
        out.append("wsl")
    if fx.str("system.container") or fx.bool("system.container"):
        out.append("container")
    present = _gpus.nvidia_gpu_present(fx)
    out.append("gpu_unknown" if present is None else "gpu_yes" if present else "gpu_no")
    for g in _gpus.gpus(fx)[:1]:
        major = _gpus.cap_number(g.get("capability"))
        if major:
            out.append(f"gpu_cc{major // 10}")
    out.append("driver_known" if fx.str("nvml.driver_version") else "driver_unknown")
    status = re.sub(r"[^a-z]", "", (fx.str("nvml.status") or "").lower())
    if status:
        out.append(f"nvml_{status}")
    version = fx.str("torch.version") or ""
    torch = fx.dict("torch") or {}
    if fx.get("torch.installed") is False or fx.str("torch.status") == "missing":
        out.append("torch_absent")
    elif "+cpu" in version or ("cuda" in torch and not torch.get("cuda")):
        out.append("torch_cpu")
    elif fx.str("torch.cuda") or re.search(r"\+cu\d", version):
        out.append("torch_cuda")
    elif version:
        out.append("torch_build_unknown")
    else:
        out.append("torch_unknown")
    avail = fx.get("torch.cuda_available")
    out.append("available_yes" if avail is True else "available_no" if avail is False else "available_unknown")
    pkgs = set()
    for d in fx.dicts("packages.distributions"):
        name = normalize_name(str(d.get("name") or ""))
        if name in FACT_PACKAGES:
            pkgs.add("pkg_" + FACT_PACKAGES[name])
        elif name.startswith("nvidia-"):
            pkgs.add("pkg_nvidia_wheels")
    out += sorted(pkgs)
    if fx.str("toolkit.nvcc_version"):
        out.append("nvcc_yes")
    kinds = {re.sub(r"[^a-z]", "", str(p.get("kind") or "").lower()) for p in fx.dicts("pasted.parts")}
    out += sorted(f"part_{k}" for k in kinds if k)
    return out
