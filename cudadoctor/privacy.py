"""Privacy: the shareable view of facts and reports, decided once, where the data is made.

Every command output is redacted unless the user passes ``--show-pii``. One function,
:meth:`Redactor.redact`, walks any JSON-like data (a facts document, a report, a diff, a
triage result) and rewrites its strings; the printers never decide what is private.

What is redacted:

* the home directory becomes ``~`` (the live ``$HOME``, and for files from elsewhere the home
  of the recorded interpreter); other users' home directories keep their base with the user
  name replaced by a pseudonym (``/home/user-1a2b3c4d``);
* user names and host names become stable pseudonyms (``user-1a2b3c4d``, ``host-5e6f7a8b``);
* GPU UUIDs (``GPU-…``, ``MIG-…``) and serial numbers become pseudonyms (so two GPUs stay
  distinguishable, and ``CUDA_VISIBLE_DEVICES=GPU-…`` still names the same device);
* environment variables whose names look secret (``SECRET_NAME``) are dropped (the live probe
  never reads them at all; this covers facts files made elsewhere), ``user:password@`` in URLs
  becomes ``***@``, and secret-looking assignments (``HF_TOKEN=…``, ``?token=…``,
  ``Authorization: Bearer …``) and well-known token shapes (``hf_…``, ``ghp_…``, ``AKIA…``)
  become ``***`` in every string, error texts and paths included.

Pseudonyms are ``HMAC-SHA256(key, kind + ":" + value)`` truncated to 8 hex digits. The key is
``$CUDADOCTOR_PSEUDONYM_KEY`` when set (a site key: the same host gets the same pseudonym in
every report made with that key, so ``diff`` and ``fleet`` can still compare and group
reports), otherwise 16 random bytes per report (pseudonyms are consistent within one report
but cannot be linked across reports, nor reversed by hashing guessed host names).

Redacting twice is harmless: pseudonyms and ``~`` are left as they are. ``--show-pii``
(``Redactor(pii=False)``) leaves names, paths and identifiers but still removes secrets.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import socket
from collections import Counter
from dataclasses import replace
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .facts import as_object
from .probes.system import SECRET_NAME

KEY_ENV = "CUDADOCTOR_PSEUDONYM_KEY"

_PSEUDONYM = re.compile(r"^(?:user|host|serial)-[0-9a-f]{8}$|^(?:GPU|MIG)-anon-[0-9a-f]{8}$")

# --- secrets ---------------------------------------------------------------------------------

# Every repetition is bounded or anchored: these run over long hostile strings (linear time).
_URL_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]{0,31}://)(?!\*\*\*@)[^/\s@'\"<>]{1,512}@")
# NAME=value where NAME looks like a secret environment variable (upper case, as in a shell).
_SECRET_ASSIGN = re.compile(
    r"\b(?P<name>[A-Z][A-Z0-9_]{0,63}(?:TOKEN|KEY|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|AUTH|PRIVATE|COOKIE|SESSION)[A-Z0-9_]{0,63})"
    r"(?P<sep>\s*=\s*|'\s*:\s*'|\"\s*:\s*\")(?P<value>\"[^\"]{0,4096}\"|'[^']{0,4096}'|[^\s'\",;]{1,4096})"
)
_SECRET_QUERY = re.compile(
    r"(?i)(?P<lead>[?&;](?:access_token|auth_token|api_key|apikey|token|key|secret|password|passwd|pwd|sig|signature|"
    r"x-amz-signature|x-amz-credential|x-amz-security-token|client_secret)=)[^&\s#'\"]+"
)
_SECRET_FLAG = re.compile(
    r"(?i)(?P<lead>--?(?:password|passwd|token|api-key|apikey|secret|auth-token)(?:=|\s+))(?!\*\*\*)[^\s'\"]+"
)
_AUTH_HEADER = re.compile(
    r"(?i)(?P<lead>\b(?:authorization|proxy-authorization)\s*:\s*(?:bearer|basic|token|digest)?\s*)(?!\*\*\*)[^\s'\",]+"
)
_TOKEN_SHAPES = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}|npm_[A-Za-z0-9]{36})\b"
)
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----.*?(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|$)", re.S)

# --- identifiers -----------------------------------------------------------------------------

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_GPU_UUID = re.compile(rf"\b(?P<kind>GPU|MIG)-(?P<rest>(?:GPU-)?{_UUID}(?:/\d+/\d+)?)\b")
_SERIAL_KEYS = {"serial", "serial_number", "board_serial", "board_id", "module_id", "uuid", "gpu_uuid"}
_HOST_KEYS = {"hostname", "host", "node", "nodename", "fqdn"}

# Home directories: POSIX bases followed by a user name; Windows profile folders (any drive, either
# separator, doubled backslashes as in a Python repr).
_POSIX_HOME = re.compile(
    r"(?<![\w.~-])(?P<base>/(?:home|Users|var/home|export/home|usr/home|homes|u))/(?P<name>[A-Za-z0-9_][A-Za-z0-9_.@-]{0,127})(?=[/\\'\"\s:;,)\]}]|$)"
)
_WIN_HOME = re.compile(
    r"(?i)(?P<base>\b[A-Z]:(?:\\{1,2}|/)(?:Users|Documents and Settings))(?P<sep>\\{1,2}|/)(?P<name>[^\\/\s'\":;,*?<>|]{1,128})(?=\\|/|['\"\s:;,)\]}]|$)"
)
_NOT_USERS = {"public", "default", "default user", "all users", "shared", "guest", "administrator"}

# Words that must never be replaced as if they were a user or host name: names like these are
# not identifying, and replacing them everywhere would mangle the facts ("Ubuntu 22.04").
_COMMON = {
    "root",
    "user",
    "users",
    "admin",
    "nobody",
    "runner",
    "ubuntu",
    "debian",
    "fedora",
    "centos",
    "rocky",
    "alma",
    "arch",
    "linux",
    "windows",
    "darwin",
    "macos",
    "localhost",
    "localhost.localdomain",
    "localdomain",
    "jovyan",
    "vscode",
    "codespace",
    "codespaces",
    "colab",
    "kaggle",
    "docker",
    "container",
    "guest",
    "home",
    "work",
    "data",
    "test",
    "tests",
    "opt",
    "usr",
    "lib",
    "bin",
    "local",
    "site",
    "packages",
    "cuda",
    "torch",
    "nvidia",
    "python",
    "python3",
    "conda",
    "pip",
    "gpu",
    "cpu",
    "node",
    "server",
    "desktop",
    "laptop",
    "workstation",
    "ok",
    "error",
    "none",
    "null",
    "true",
    "false",
    "unknown",
    "import",
    "skipped",
    "running",
    "cpython",
    "version",
    "status",
    "name",
    "path",
    "default",
    "public",
    "shared",
    "ec2-user",
    "administrator",
    "system",
    "app",
    "dev",
    "build",
    "main",
    "master",
    "(none)",
}


def _env_user_names(environ: Dict[str, str]) -> Set[str]:
    names = {environ.get(v, "") for v in ("USER", "LOGNAME", "USERNAME", "SUDO_USER")}
    try:
        import pwd  # POSIX only

        names.add(pwd.getpwuid(os.getuid()).pw_name)
    except (ImportError, KeyError, OSError, AttributeError):
        pass
    return {n for n in names if n}


def _path_pattern(path: str) -> str:
    """A regex for a path that accepts either separator, doubled backslashes included."""
    return "".join(r"(?:\\{1,2}|/)" if ch in "/\\" else re.escape(ch) for ch in path)


def _as_pattern(word: str) -> "re.Pattern[str]":
    return re.compile(rf"(?i)(?<![A-Za-z0-9_-]){re.escape(word)}(?![A-Za-z0-9_-])")


class Redactor:
    """Rewrites strings of JSON-like data for sharing. Build one per output with :func:`redactor_for`."""

    def __init__(
        self,
        key: Optional[bytes] = None,
        homes: Iterable[str] = (),
        users: Iterable[str] = (),
        hosts: Iterable[str] = (),
        keyed: Optional[bool] = None,
        pii: bool = True,
        keep_serials: bool = False,
    ):
        #: False: remove secrets only and leave names, paths and identifiers (--show-pii).
        self.pii = pii
        #: True: leave serial numbers as they are (`devices --show-serials` asked for them).
        self.keep_serials = keep_serials
        self.keyed = bool(key) if keyed is None else keyed
        self.key = key or secrets.token_bytes(16)
        # The user's own home directories (become "~"), longest first.
        self.homes = sorted(
            {h.rstrip("/\\") for h in homes if h and h.rstrip("/\\") not in ("", "~") and len(h) > 1}, key=len, reverse=True
        )
        self.users = {u for u in users if u and not _PSEUDONYM.match(u)}
        self.own_users = {u.lower() for u in self.users}
        hosts_all: Set[str] = set()
        for h in hosts:
            if not h or _PSEUDONYM.match(h):
                continue
            hosts_all.add(h)
        self.hosts = hosts_all
        self.counts: Counter = Counter()
        # text() is pure given this redactor, and a report repeats its strings (paths above all):
        # each distinct string is redacted once, and what it counted is counted again on a repeat.
        self._memo: Dict[str, Tuple[str, Tuple[Tuple[str, int], ...]]] = {}
        self._hits: List[Tuple[str, int]] = []
        self._home_res = [
            (
                re.compile(
                    r"(?<![\w.~-])" + _path_pattern(h) + r"(?=[/\\'\"\s:;,)\]}]|$)", re.I if re.match(r"^[A-Za-z]:", h) else 0
                ),
                h,
            )
            for h in self.homes
        ]
        words: List[Tuple[str, str]] = []
        for h in sorted(self.hosts, key=len, reverse=True):
            full = h.lower()
            short = full.split(".")[0]
            p = self.pseudonym("host", short)
            for w in dict.fromkeys((full, short)):
                if len(w) >= 2 and w not in _COMMON:
                    words.append((w, p))
        for u in sorted(self.users, key=len, reverse=True):
            if len(u) >= 3 and u.lower() not in _COMMON:
                words.append((u, self.pseudonym("user", u.lower())))
        self._words = [(_as_pattern(w), p, "host" if p.startswith("host-") else "user") for w, p in words]
        # A host name can be a key too (a distributed report's {"hosts": {"gpu-node-17": [0, 1]}}).
        self._host_names = {w.lower(): p for w, p in words if p.startswith("host-")}

    # -- pseudonyms --------------------------------------------------------------------------

    def pseudonym(self, kind: str, value: str) -> str:
        if _PSEUDONYM.match(value):
            return value
        digest = hmac.new(self.key, f"{kind}:{value}".encode("utf-8", "replace"), hashlib.sha256).hexdigest()[:8]
        return f"{kind}-{digest}"

    # -- strings -----------------------------------------------------------------------------

    def _sub(self, pattern: "re.Pattern[str]", repl: Any, text: str, what: str) -> str:
        new, n = pattern.subn(repl, text)
        if n:
            self._hits.append((what, n))
        return new

    def text(self, s: str) -> str:
        """Redact one string (a path, an error text, an environment value...)."""
        if not s:
            return s
        hit = self._memo.get(s)
        if hit is None:
            self._hits = []
            hit = self._memo[s] = (self._text(s), tuple(self._hits))
        for what, n in hit[1]:
            self.counts[what] += n
        return hit[0]

    def _text(self, s: str) -> str:
        t = s
        t = self._sub(_PRIVATE_KEY, "***", t, "private keys")
        t = self._sub(_URL_USERINFO, r"\g<scheme>***@", t, "credentials in URLs")
        t = self._sub(_SECRET_ASSIGN, lambda m: f"{m.group('name')}{m.group('sep')}***", t, "secret values")
        t = self._sub(_SECRET_QUERY, r"\g<lead>***", t, "secret values")
        t = self._sub(_SECRET_FLAG, r"\g<lead>***", t, "secret values")
        t = self._sub(_AUTH_HEADER, r"\g<lead>***", t, "secret values")
        t = self._sub(_TOKEN_SHAPES, "***", t, "secret values")
        if not self.pii:
            return t
        t = self._sub(
            _GPU_UUID, lambda m: f"{m.group('kind')}-anon-{self.pseudonym('uuid', m.group('rest').lower())[5:]}", t, "GPU UUIDs"
        )
        for rx, _home in self._home_res:
            t = self._sub(rx, "~", t, "home directory")
        t = self._sub(_POSIX_HOME, self._home_repl, t, "home directory")
        t = self._sub(_WIN_HOME, self._home_repl, t, "home directory")
        for rx, p, kind in self._words:
            t = self._sub(rx, p, t, f"{kind} names")
        return t

    def _home_repl(self, m: "re.Match[str]") -> str:
        name = m.group("name")
        if _PSEUDONYM.match(name) or name.lower() in _NOT_USERS:
            return m.group(0)
        if name.lower() in self.own_users:
            return "~"
        sep = m.groupdict().get("sep") or "/"
        return f"{m.group('base')}{sep}{self.pseudonym('user', name.lower())}"

    # -- data --------------------------------------------------------------------------------

    def redact(self, obj: Any, path: Tuple[str, ...] = ()) -> Any:
        """A redacted copy of JSON-like data (dicts, lists, strings, numbers)."""
        if isinstance(obj, dict):
            out = {}
            for k, v in obj.items():
                ks = str(k)
                if path and path[-1] == "vars" and SECRET_NAME.search(ks):
                    self.counts["secret-looking environment variables"] += 1
                    continue
                if "/" in ks or "\\" in ks:
                    nk = self.text(ks)
                elif self.pii and ks.lower() in self._host_names:
                    self.counts["host names"] += 1
                    nk = self._host_names[ks.lower()]
                else:
                    nk = k
                out[nk] = self.redact(v, path + (ks,))
            return out
        if isinstance(obj, (list, tuple)):
            return [self.redact(v, path) for v in obj]
        if isinstance(obj, str):
            return self._value(obj, path)
        return obj

    def _value(self, obj: str, path: Tuple[str, ...]) -> str:
        key = path[-1].lower() if path else ""
        if not self.pii:
            return self.text(obj)
        if key in _SERIAL_KEYS and "serial" in key and self.keep_serials:
            return obj
        if key in _SERIAL_KEYS and obj and not _GPU_UUID.fullmatch(obj):
            if _PSEUDONYM.match(obj) or obj.lower() in ("n/a", "[n/a]", "none", "unknown", "not supported"):
                return obj
            self.counts["serial numbers" if "serial" in key else "GPU UUIDs"] += 1
            return self.pseudonym("serial", obj)
        if key in _HOST_KEYS and obj and (len(path) == 1 or path[-2] in ("system", "tool")):
            if _PSEUDONYM.match(obj) or obj.lower() in ("localhost", "(none)"):
                return obj
            self.counts["host names"] += 1
            return self.pseudonym("host", obj.lower().split(".")[0])
        return self.text(obj)

    def summary(self) -> Dict[str, Any]:
        """What was redacted, for the report's privacy line and the facts' ``redaction`` record."""
        if not self.pii:
            return {"applied": False, "reason": "--show-pii", "redacted": dict(sorted(self.counts.items()))}
        return {
            "applied": True,
            "pseudonyms": "site-key" if self.keyed else "per-report",
            "redacted": {k: v for k, v in sorted(self.counts.items())},
        }


def hosts_in(doc: Any) -> Set[str]:
    """Host names a distributed smoke report records: every rank's host (``host``/``hostname``
    values, the keys of a ``hosts`` map) and a MASTER_ADDR that is a name rather than an address."""
    found: Set[str] = set()

    def walk(o: Any, depth: int = 0) -> None:
        if depth > 40:
            return
        if isinstance(o, dict):
            for k, v in o.items():
                kl = str(k).lower()
                if kl in ("host", "hostname") and isinstance(v, str) and v:
                    found.add(v)
                elif kl == "hosts" and isinstance(v, dict):
                    found.update(str(h) for h in v if h)
                elif kl in ("master_addr", "addr") and isinstance(v, str) and _is_host_name(v):
                    found.add(v)
                walk(v, depth + 1)
        elif isinstance(o, list):
            for v in o:
                walk(v, depth + 1)

    walk(doc)
    return {h for h in found if h.lower() not in _COMMON}


def _is_host_name(v: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(v.strip("[]"))
        return False
    except ValueError:
        return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.-]*", v))


def redactor_for(
    docs: Sequence[Dict[str, Any]] = (),
    live: bool = False,
    environ: Optional[Dict[str, str]] = None,
    keep_serials: bool = False,
    extra_hosts: Iterable[str] = (),
) -> Redactor:
    """A redactor that knows the home directories, user names and host names to hide.

    ``docs`` are the facts documents (or reports) that will be redacted: their recorded host names
    and the homes of their interpreters are taken from them. ``live`` adds this machine's
    ``$HOME``, user name and host name (use it whenever the data was collected here or the
    output is printed here). ``extra_hosts`` are more host names to hide (see :func:`hosts_in`).
    """
    env = dict(os.environ if environ is None else environ)
    key = env.get(KEY_ENV, "").encode()
    homes: List[str] = []
    users: Set[str] = set()
    hosts: Set[str] = {h for h in extra_hosts if h}
    if live:
        home = env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")
        if home and home not in ("/", "~"):
            homes.append(home)
            try:
                homes.append(os.path.realpath(home))
            except OSError:
                pass
        users |= _env_user_names(env)
        try:
            hosts.add(socket.gethostname())
        except OSError:
            pass
        if env.get("HOSTNAME"):
            hosts.add(env["HOSTNAME"])
    for doc in docs:
        inner = doc.get("facts")
        facts = inner if isinstance(inner, dict) else doc
        h = as_object(facts.get("system")).get("hostname")
        if isinstance(h, str) and h:
            hosts.add(h)
        # The owner of the recorded interpreter's home is "the user" of that document.
        py = as_object(facts.get("python"))
        for p in (py.get("executable"), py.get("prefix"), as_object(facts.get("tool")).get("python_target")):
            if isinstance(p, str):
                m = _POSIX_HOME.search(p) or _WIN_HOME.search(p)
                if m and m.group("name").lower() not in _NOT_USERS:
                    users.add(m.group("name"))
    return Redactor(key=key or None, homes=homes, users=users, hosts=hosts, keep_serials=keep_serials)


# --- applying it to the project's documents -------------------------------------------------


def _record(prev: Any, r: Redactor) -> Dict[str, Any]:
    """This redaction's record; a report already redacted with a site key keeps saying so."""
    rec = r.summary()
    if rec.get("applied") and isinstance(prev, dict) and prev.get("applied") and prev.get("pseudonyms") == "site-key":
        rec["pseudonyms"] = "site-key"
    return rec


def redact_facts(facts: Dict[str, Any], r: Redactor) -> Dict[str, Any]:
    """A redacted copy of a facts document, with a ``redaction`` record of what was done."""
    out = r.redact({k: v for k, v in facts.items() if k != "redaction"})  # redact() builds a new tree
    out["redaction"] = _record(facts.get("redaction"), r)
    return out


def redact_report(report: Any, r: Redactor) -> Any:
    """A redacted copy of a :class:`~cudadoctor.report.Report` (facts, findings, check errors, extra)."""
    from .model import Finding

    facts = redact_facts(report.facts, r)
    findings = [Finding.from_dict(r.redact(f.to_dict())) for f in report.findings]
    checks = [replace(c, error=r.text(c.error)) if c.error else c for c in report.checks]
    extra = r.redact(report.extra) if report.extra else report.extra
    facts["redaction"] = _record(report.facts.get("redaction"), r)  # counts now include the findings
    return replace(report, facts=facts, findings=findings, checks=checks, extra=extra)


def shareable(report: Any, show_pii: bool, live: bool, redactor: Optional[Redactor] = None) -> Any:
    """The report as every command prints it: redacted unless ``show_pii``."""
    if show_pii:
        return redact_report(report, Redactor(pii=False))
    return redact_report(report, redactor or redactor_for([report.facts], live=live))


def describe(record: Optional[Dict[str, Any]]) -> str:
    """One line saying what was redacted (for Markdown and text)."""
    if not isinstance(record, dict):
        return ""
    if record.get("applied") is False:
        return (
            "Not redacted (--show-pii): this report shows home paths, user and host names and GPU UUIDs/serials; "
            "passwords in URLs and tokens were still removed."
        )
    counts = record.get("redacted") or {}
    parts = [
        "home directory shown as ~",
        "user and host names, GPU UUIDs and serial numbers replaced by pseudonyms "
        + ("(site key)" if record.get("pseudonyms") == "site-key" else "(per report)"),
        "environment variables with secret-looking names never read",
        "passwords in URLs and tokens removed",
    ]
    found = ", ".join(f"{k} {v}" for k, v in counts.items())
    return "Redacted: " + "; ".join(parts) + (f" (here: {found})" if found else "") + ". --show-pii shows them."
