"""Reports that are safe to share: redaction in every output, and Markdown that cannot inject.

The planted values below stand for what a real user's machine has: secrets in the environment
(tokens, an index URL with a password), a home directory, a user name, a host name, GPU UUIDs
and serials. No output format of check, report, diff, triage or collect may contain them unless
--show-pii is given (and secrets never).
"""

from __future__ import annotations

import copy
import html
import json
import re
import socket
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import FIXTURES, load_fixture, run_cli, torch_python, write_json
from cudadoctor import registry
from cudadoctor.privacy import KEY_ENV, Redactor, redact_facts, redact_report, redactor_for
from cudadoctor.render.markdown import fence, md_code, md_escape, render_markdown
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)
NODRIVER = "live-torch2141-cu130-nodriver.json"
CPU = "live-torch2130-cpu-tv0280.json"

HF = "hf_QmVzdFRva2VuRm9yVGVzdGluZ09ubHkxMjM0NTY"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PASSWORD = "hunter2"
SECRETS = [HF, AWS_SECRET, PASSWORD]
GPU_UUID = "GPU-8e6b2d0a-1b2c-3d4e-5f60-718293a4b5c6"
SERIAL = "1324021012345"
USER = "alicezhang"
HOST = "gpu-node-17.corp.example"
HOME = f"/home/{USER}"


def planted_facts(name: str = NODRIVER) -> dict:
    """A recorded fixture with the user's identity and secrets planted where real ones appear."""
    f = load_fixture(name)
    text = json.dumps(f).replace("/work/venvs/", f"{HOME}/venvs/").replace("/root/", f"{HOME}/")
    f = json.loads(text)
    f["system"]["hostname"] = HOST
    f["environment"]["vars"].update({
        "HF_TOKEN": HF,  # a file from elsewhere may hold one; the live probe never reads it
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "PIP_INDEX_URL": f"https://{USER}:{PASSWORD}@pypi.corp.example/simple",
        "TORCH_HOME": f"{HOME}/.cache/torch",
        "NCCL_DEBUG_FILE": f"/scratch/{USER}/nccl.%h.log",
        "CUDA_VISIBLE_DEVICES": GPU_UUID,
    })
    f["nvml"]["devices"] = [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "uuid": GPU_UUID, "serial": SERIAL,
                             "pci_bus_id": "00000000:07:00.0", "compute_capability": "8.0"}]
    f["user_error"] = {"text": (
        "Traceback (most recent call last):\n"
        f'  File "{HOME}/proj/train.py", line 3, in <module>\n'
        f"    download(token='{HF}')\n"
        f"RuntimeError: Found no NVIDIA driver on your system (HF_TOKEN={HF} AWS_ACCESS_KEY_ID={AWS_ID} "
        f"AWS_SECRET_ACCESS_KEY={AWS_SECRET} on {HOST}, see https://{USER}:{PASSWORD}@git.corp.example/x)")}
    return f


def leaks(text: str, host_short: str = "gpu-node-17") -> list:
    """Which planted values appear in an output."""
    found = [s for s in SECRETS + [AWS_ID, USER, HOME, GPU_UUID, SERIAL, HOST] if s in text]
    if re.search(rf"(?<![A-Za-z0-9-]){re.escape(host_short)}(?![A-Za-z0-9-])", text):
        found.append(host_short)
    return found


def all_outputs(tmp_path: Path, facts_file: Path, other: Path, extra=(), env=None) -> dict:
    """Every output of every command that reads this facts file (text, JSON, Markdown, files)."""
    r = run_cli("devices", "--facts", str(facts_file), "--show-serials", *extra, env=env)
    outs_serials = r.stdout + r.stderr
    outs = {}
    for fmt in ("text", "json", "markdown"):
        r = run_cli("check", "--facts", str(facts_file), "--format", fmt, "-v", *extra, env=env)
        outs[f"check {fmt}"] = r.stdout + r.stderr
        r = run_cli("diff", str(facts_file), str(other), "--format", fmt, *extra, env=env)
        outs[f"diff {fmt}"] = r.stdout + r.stderr
        r = run_cli("devices", "--facts", str(facts_file), "--format", fmt, *extra, env=env)
        outs[f"devices {fmt}"] = r.stdout + r.stderr
        err = json.loads(facts_file.read_text())["user_error"]["text"]
        r = run_cli("triage", "-", "--facts", str(facts_file), "--format", fmt, *extra, env=env, input=err)
        outs[f"triage {fmt}"] = r.stdout + r.stderr
        assert r.returncode == 0, r.stderr
    base = tmp_path / "ticket"
    r = run_cli("report", "--facts", str(facts_file), "-o", str(base), *extra, env=env)
    assert r.returncode == 0, r.stderr
    outs["report stdout"] = r.stdout + r.stderr
    outs["report json"] = (tmp_path / "ticket.json").read_text()
    outs["report md"] = (tmp_path / "ticket.md").read_text()
    outs["devices --show-serials"] = outs_serials
    return outs


def test_no_output_of_any_command_leaks_planted_identity_or_secrets(tmp_path):
    f = write_json(tmp_path / "user.json", planted_facts())
    other = write_json(tmp_path / "other.json", planted_facts(CPU))
    outs = all_outputs(tmp_path, f, other)
    serial = outs.pop("devices --show-serials")
    assert SERIAL in serial and not [x for x in leaks(serial) if x != SERIAL]  # asked for serials only
    bad = {k: leaks(v) for k, v in outs.items() if leaks(v)}
    assert not bad, bad
    # What was redacted is said, in the report and in Markdown.
    assert "home directory shown as" in outs["report md"] and "pseudonyms" in outs["report md"]
    rec = json.loads(outs["report json"])["facts"]["redaction"]
    assert rec["applied"] is True and rec["redacted"]["secret-looking environment variables"] == 2
    # The facts still say what they need to: the pseudonymised host, ~ paths, the GPU.
    facts = json.loads(outs["report json"])["facts"]
    assert re.fullmatch(r"host-[0-9a-f]{8}", facts["system"]["hostname"])
    assert facts["python"]["executable"] == "~/venvs/t214/bin/python"
    assert re.fullmatch(r"GPU-anon-[0-9a-f]{8}", facts["environment"]["vars"]["CUDA_VISIBLE_DEVICES"])
    assert facts["environment"]["vars"]["PIP_INDEX_URL"] == "https://***@pypi.corp.example/simple"
    assert facts["environment"]["vars"]["NCCL_DEBUG_FILE"].startswith("/scratch/user-")


def test_show_pii_shows_identity_but_never_secrets(tmp_path):
    f = write_json(tmp_path / "user.json", planted_facts())
    r = run_cli("check", "--facts", str(f), "--format", "json", "--show-pii")
    assert "warning: --show-pii" in r.stderr
    out = r.stdout
    assert HOME in out and HOST in out and GPU_UUID in out and SERIAL in out
    assert not [s for s in SECRETS if s in out]
    assert json.loads(out)["facts"]["redaction"]["applied"] is False
    r = run_cli("report", "--facts", str(f), "-o", str(tmp_path / "t"), "--show-pii")
    md = (tmp_path / "t.md").read_text()
    assert "Not redacted" in md and HOME in md and PASSWORD not in md


@pytest.mark.skipif(torch_python() is None, reason="needs an interpreter with torch (CUDADOCTOR_TEST_TORCH_PYTHON)")
def test_live_run_with_planted_environment(tmp_path):
    """A live run: secrets in the environment, the diagnosed venv under $HOME, this host's name."""
    home = tmp_path / "home" / USER
    home.mkdir(parents=True)
    venv = Path(torch_python()).resolve().parent.parent
    (home / "venv").symlink_to(venv, target_is_directory=True)
    py = str(home / "venv" / "bin" / "python")
    env = {
        "HOME": str(home), "USER": USER, "LOGNAME": USER,
        "HF_TOKEN": HF, "AWS_SECRET_ACCESS_KEY": AWS_SECRET, "AWS_ACCESS_KEY_ID": AWS_ID,
        "PIP_INDEX_URL": f"https://{USER}:{PASSWORD}@pypi.corp.example/simple",
        "TORCH_HOME": f"{home}/.cache/torch",
        "PYTORCH_KERNEL_CACHE_PATH": f"https://{USER}:{PASSWORD}@cache.corp.example/k",
        "NCCL_SOCKET_IFNAME": "eth0", "NCCL_DEBUG_FILE": f"{home}/nccl.log",
        "CUDA_VISIBLE_DEVICES": GPU_UUID,
    }
    host = socket.gethostname()
    outs = {}
    for fmt in ("text", "json", "markdown"):
        r = run_cli("check", "--python", py, "--format", fmt, "-v", env=env)
        outs[f"check {fmt}"] = r.stdout + r.stderr
    r = run_cli("report", "--python", py, "-o", str(tmp_path / "live"), "--error",
                f"OSError: {home}/venv/lib/x.so: cannot open (token={HF})", env=env)
    assert r.returncode == 0, r.stderr
    outs["report stdout"] = r.stdout
    outs["report json"] = (tmp_path / "live.json").read_text()
    outs["report md"] = (tmp_path / "live.md").read_text()
    r = run_cli("collect", "--python", py, "--quick", env=env)
    outs["collect"] = r.stdout
    r = run_cli("triage", "--live", "--quick", "--python", py, "--format", "json",
                f"RuntimeError: Found no NVIDIA driver on your system; {home}/venv on {host}", env=env)
    outs["triage live"] = r.stdout + r.stderr
    r = run_cli("diff", str(tmp_path / "live.json"), str(FIXTURES / "facts" / CPU), "--format", "markdown", env=env)
    outs["diff"] = r.stdout + r.stderr
    for name, text in outs.items():
        assert not [s for s in SECRETS + [AWS_ID, str(home), USER, GPU_UUID] if s in text], name
        assert not re.search(rf"(?<![A-Za-z0-9-]){re.escape(host)}(?![A-Za-z0-9-])", text), (name, host)
    facts = json.loads(outs["report json"])["facts"]
    assert facts["python"]["executable"] == "~/venv/bin/python"
    assert "HF_TOKEN" not in facts["environment"]["vars"] and "AWS_SECRET_ACCESS_KEY" not in facts["environment"]["vars"]
    assert facts["environment"]["vars"]["TORCH_HOME"] == "~/.cache/torch"


# --- the redaction function -----------------------------------------------------------------


def test_pseudonyms_stable_within_a_report_and_across_reports_with_a_site_key():
    a = Redactor(key=b"site", hosts=["node7.example"], users=["bob"])
    b = Redactor(key=b"site", hosts=["node7.example"], users=["bob"])
    assert a.text("ssh node7 / node7.example") == b.text("ssh node7 / node7.example")
    assert a.text("node7") == a.text("node7.example")  # short and full name: one host
    assert a.text("/home/bob/x") == "~/x" and a.text("/scratch/bob/x") == b.text("/scratch/bob/x")
    c = Redactor(key=b"other", hosts=["node7.example"])
    assert a.text("node7") != c.text("node7")
    # Without a key: random per report, so unlinkable across reports.
    assert Redactor(hosts=["node7"]).text("node7") != Redactor(hosts=["node7"]).text("node7")


def test_site_key_from_the_environment_lets_two_reports_be_compared(tmp_path):
    env = {KEY_ENV: "our-site-key"}
    f = write_json(tmp_path / "u.json", planted_facts())
    one = json.loads(run_cli("check", "--facts", str(f), "--format", "json", env=env).stdout)
    two = json.loads(run_cli("check", "--facts", str(f), "--format", "json", env=env).stdout)
    assert one["facts"]["system"]["hostname"] == two["facts"]["system"]["hostname"]
    assert one["facts"]["redaction"]["pseudonyms"] == "site-key"
    three = json.loads(run_cli("check", "--facts", str(f), "--format", "json").stdout)
    assert three["facts"]["system"]["hostname"] != one["facts"]["system"]["hostname"]
    assert three["facts"]["redaction"]["pseudonyms"] == "per-report"
    # Support re-diagnosing the site-keyed report without the key: the pseudonyms stay, and so does the record.
    p = write_json(tmp_path / "keyed.json", one)
    again = json.loads(run_cli("check", "--facts", str(p), "--format", "json").stdout)
    assert again["facts"]["system"]["hostname"] == one["facts"]["system"]["hostname"]
    assert again["facts"]["redaction"]["pseudonyms"] == "site-key"


def test_redacting_twice_changes_nothing_more():
    r = redactor_for([planted_facts()])
    once = redact_facts(planted_facts(), r)
    twice = redact_facts(once, redactor_for([once]))
    once.pop("redaction"), twice.pop("redaction")
    assert once == twice


@pytest.mark.parametrize("fixture", [NODRIVER, CPU])
def test_redacted_facts_give_the_same_diagnosis(fixture):
    raw = planted_facts(fixture)
    red = redact_facts(raw, redactor_for([raw]))
    codes = lambda f: [(x.code, x.severity) for x in diagnose(copy.deepcopy(f), REG).findings]
    assert codes(red) == codes(raw)


@pytest.mark.parametrize("text,want", [
    # Windows homes: either separator, any case, doubled backslashes as in a repr or JSON dump.
    (r"C:\Users\alicezhang\AppData\Local\Programs\Python\Python311\python.exe", r"~\AppData\Local\Programs\Python\Python311\python.exe"),
    (r"c:/users/alicezhang/x", "~/x"),
    (r"Error loading \"c:\\Users\\alicezhang\\anaconda3\\torch\\lib\\fbgemm.dll\"", r"Error loading \"~\\anaconda3\\torch\\lib\\fbgemm.dll\""),
    ("/Users/alicezhang/miniforge3/bin/python", "~/miniforge3/bin/python"),
    # Not a home, not a secret: untouched.
    ("KeyError: 'cuda'", "KeyError: 'cuda'"),
    ("/home/linuxbrew-not-user", None),
    ("https://download.pytorch.org/whl/cu130", "https://download.pytorch.org/whl/cu130"),
    ("/usr/local/cuda-12.4/lib64/libcudart.so.12", "/usr/local/cuda-12.4/lib64/libcudart.so.12"),
    ("Ubuntu 22.04.4 LTS", "Ubuntu 22.04.4 LTS"),
    # Secrets in error texts and paths.
    ("pip install --index-url https://bob:s3cr3t@pypi.example/simple torch", "pip install --index-url https://***@pypi.example/simple torch"),
    ("GET https://hf.co/x?token=abcdef&rev=main", "GET https://hf.co/x?token=***&rev=main"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", "Authorization: Bearer ***"),
    ("export WANDB_API_KEY=0123456789abcdef", "export WANDB_API_KEY=***"),
    ("{'HF_TOKEN': 'hf_abc'}", "{'HF_TOKEN': '***'}"),
    ("huggingface-cli login --token hf_abcdefghijklmnopqrstuvwxyz012345", "huggingface-cli login --token ***"),
])
def test_redact_text(text, want):
    r = Redactor(key=b"k", homes=[], users=[USER])
    got = r.text(text)
    if want is None:
        assert got.startswith("/home/user-") and "linuxbrew" not in got
    else:
        assert got == want


def test_gpu_uuids_and_serials_pseudonymised_consistently():
    f = planted_facts()
    f["nvml"]["devices"].append(dict(f["nvml"]["devices"][0], index=1, uuid=GPU_UUID.replace("8e6b", "9f7c"), serial="999"))
    out = redact_facts(f, redactor_for([f]))
    devs = out["nvml"]["devices"]
    assert devs[0]["uuid"] != devs[1]["uuid"] and devs[0]["serial"] != devs[1]["serial"]
    assert devs[0]["uuid"] == out["environment"]["vars"]["CUDA_VISIBLE_DEVICES"]  # still names the same GPU
    assert devs[0]["pci_bus_id"] == "00000000:07:00.0" and devs[0]["name"] == "NVIDIA A100-SXM4-80GB"


def test_common_host_names_do_not_mangle_the_facts():
    f = load_fixture(NODRIVER)
    f["system"]["hostname"] = "debian"
    out = redact_facts(f, redactor_for([f]))
    assert out["system"]["distro"] == "Debian GNU/Linux 12 (bookworm)"
    assert out["system"]["hostname"].startswith("host-")


def test_redaction_is_linear_on_hostile_strings():
    r = Redactor(key=b"k", homes=["/home/alicezhang"], users=[USER], hosts=[HOST])
    for s in ("a" * 200_000, "a:" * 100_000, "/home/" * 40_000, "https://" * 25_000, "A_TOKEN=" * 25_000,
              "GPU-" * 50_000, "C:\\Users\\" * 20_000, "--token " * 25_000, "@" * 200_000, "=" * 200_000,
              "A" * 200_000, "A-" * 100_000, "a." * 100_000, "hf_" + "a" * 200_000, "/home/" + "a" * 200_000 + "*",
              "-----BEGIN RSA PRIVATE KEY-----" * 5000, "x://" * 50_000, "'A_TOKEN': '" * 20_000):
        t = time.perf_counter()
        r.text(s)
        assert time.perf_counter() - t < 2.0, s[:20]
        t = time.perf_counter()
        md_escape(s)
        assert time.perf_counter() - t < 2.0, s[:20]


# --- Markdown that cannot inject ------------------------------------------------------------

def gfm(md: str) -> str:
    """GitHub's Markdown engine (cmark-gfm), raw HTML shown as GitHub's sanitiser would receive it."""
    cmarkgfm = pytest.importorskip("cmarkgfm")  # a test dependency (pyproject [test])
    return cmarkgfm.github_flavored_markdown_to_html(md, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)


def visible_text(h: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", h))


ATTACKS = [
    "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "[click](https://evil.example)",
    "![x](https://evil.example/x.png)", "https://evil.example/phish", "www.evil.example", "mail me: a@evil.example",
    "@octocat please look", "fixes #1234", "javascript:alert(1)", "&#60;script&#62;", "&lt;b&gt;", "**bold** _it_ ~~s~~",
    "| cell | split |", "`code` ``x``", "\\`escaped", "line1\nline2\r# heading\r\n- item", "$\\color{red}{x}$",
    "<details><summary>x</summary>", "[ref]: https://evil.example", "&#x3C;a href=x&#x3E;", ":tada: :+1:",
    "\u202egnp.exe", "a\x00b\x1b[31mred", "1. list", "> quote", "    indented code", "<!-- comment -->",
]


@pytest.mark.parametrize("payload", ATTACKS)
def test_md_escape_renders_as_the_text_itself(payload):
    esc = md_escape(payload)
    assert "\n" not in esc and "\r" not in esc
    for md in (esc, f"| a | b |\n|---|---|\n| {esc} | x |", f"#### title {esc}"):
        h = gfm(md)
        tags = set(re.findall(r"<(/?[a-z0-9]+)", h))
        assert tags <= {"p", "/p", "table", "/table", "thead", "/thead", "tbody", "/tbody", "tr", "/tr", "th", "/th",
                        "td", "/td", "h4", "/h4"}, (payload, h)
        text = visible_text(h).replace("\u2060", "")
        want = "".join(ch if ch.isprintable() else " " for ch in payload)
        assert want.strip() in text, (payload, h)
        # Nothing a ticket system would turn into a mention, an issue link or an email link.
        assert not re.search(r"(?<![\w\u2060])@[A-Za-z0-9]", visible_text(h)), h
        assert not re.search(r"#\d", visible_text(h)), h


_SETTINGS = settings(derandomize=True, max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_ALPHABET = st.sampled_from(list("<>[]()!*_`~#|\\&;:/@.$=-+ \n\r\tahtpsw1") + ["http://", "www.", "&#", "```", "<a ", "@x", "#1"])


@_SETTINGS
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_md_escape_property(payload):
    h = gfm(f"| a |\n|---|\n| {md_escape(payload)} |\n\n{md_escape(payload)}")
    assert not re.search(r"<(?!/?(?:p|table|thead|tbody|tr|th|td)>)", h), (payload, h)
    want = re.sub(r"\s+", " ", "".join(ch if ch.isprintable() else " " for ch in payload)).strip()
    got = re.sub(r"\s+", " ", visible_text(h).replace("\u2060", ""))
    if want:
        assert want in got, (payload, h)


@_SETTINGS
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_md_code_and_fence_cannot_be_closed_early(payload):
    h = gfm(f"- value: {md_code(payload)}")
    assert re.fullmatch(r"<ul>\n<li>value: (<code>.*</code>|\(empty\))</li>\n</ul>\n", h, re.S), (payload, h)
    h = gfm("before\n\n" + fence(payload, "json") + "\n\nafter")
    assert h.count("<pre") == 1 and h.rstrip().endswith("<p>after</p>"), (payload, h)


def test_report_markdown_with_hostile_facts_injects_nothing():
    f = load_fixture(NODRIVER)
    evil = "<img src=x onerror=alert(1)> [x](https://evil.example) @octocat #12 ```"
    f["nvml"]["devices"] = [{"index": 0, "name": evil, "compute_capability": "8.0"}]
    f["nvml"]["status"], f["nvml"]["driver_version"] = "ok", "550.54.15\r# injected"
    f["torch"]["version"] = "2.14.1+cu130 " + evil
    f["torch"]["cuda_init_error"]["message"] = "boom\r\n# Heading ``` <script>x</script>"
    f["user_error"] = {"text": evil + "\n```\n<b>"}
    report = diagnose(f, REG)
    report = redact_report(report, redactor_for([f]))
    h = gfm(render_markdown(report, verbose=True))
    assert "<img" not in h and "<script" not in h and "evil.example\"" not in h
    assert "injected</h1>" not in h and "Heading</h1>" not in h
    links = re.findall(r'<a href="([^"]+)"', h)
    assert all(u.startswith("https://") and "evil" not in u for u in links), links


# --- the report command ---------------------------------------------------------------------


def test_report_writes_json_and_markdown_and_says_what_to_attach(tmp_path):
    err = tmp_path / "err.txt"
    err.write_text("RuntimeError: Found no NVIDIA driver on your system ``` <b>")
    r = run_cli("report", "--facts", str(FIXTURES / "facts" / NODRIVER), "--error-file", str(err), "-o", str(tmp_path / "out" / "t.json"))
    assert r.returncode == 0, r.stderr
    js, md = tmp_path / "out" / "t.json", tmp_path / "out" / "t.md"
    assert f"Wrote {js}" in r.stdout and str(md) in r.stdout
    assert "Attach t.json" in r.stdout and "Paste t.md" in r.stdout
    rep = json.loads(js.read_text())
    assert rep["kind"] == "cudadoctor-report" and rep["tool"]["version"] and rep["schema_version"] == 1
    assert "kb_date" in rep["tool"] and [f["code"] for f in rep["findings"]] == ["no-nvidia-driver"]
    text = md.read_text()
    assert text.startswith("## What happened")
    assert text.count("\\<fill in\\>") == 3  # what I ran, expected, what changed (the error was given)
    assert "RuntimeError: Found no NVIDIA driver" in text and "`no-nvidia-driver`" in text
    h = gfm(text)
    assert "&lt;fill in&gt;" in h and "<b>" not in h.split("</pre>")[0].split("<pre>")[-1]
    # Re-diagnosable: the JSON goes back into check --facts.
    again = run_cli("check", "--facts", str(js), "--format", "json")
    assert [f["code"] for f in json.loads(again.stdout)["findings"]] == ["no-nvidia-driver"]


def test_report_default_name_and_directory_and_unwritable(tmp_path):
    r = run_cli("report", "--facts", str(FIXTURES / "facts" / CPU), "-o", str(tmp_path) + "/")
    assert r.returncode == 0, r.stderr
    made = sorted(p.name for p in tmp_path.iterdir())
    assert len(made) == 2 and re.fullmatch(r"cudadoctor-report-\d{8}-\d{6}\.json", made[0]), made
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run_cli("report", "--facts", str(FIXTURES / "facts" / CPU), "-o", str(blocker / "sub" / "r"))
    assert r.returncode == 2 and r.stderr.startswith("cudadoctor: error: cannot write") and len(r.stderr.splitlines()) == 1


@pytest.mark.skipif(torch_python() is None, reason="needs an interpreter with torch (CUDADOCTOR_TEST_TORCH_PYTHON)")
def test_report_smoke_is_not_run_when_no_gpu_can_be_used(tmp_path):
    """On this machine (no GPU, no driver) --smoke attaches 'not run' with the reason, not a stub pass."""
    r = run_cli("report", "--python", torch_python(), "--quick", "--smoke", "-o", str(tmp_path / "s"))
    assert r.returncode == 0, r.stderr
    smoke = json.loads((tmp_path / "s.json").read_text())["extra"]["smoke"]
    assert smoke["status"] == "not-run" and "no-nvidia-driver" in smoke["reason"]
    assert "### Smoke test" in (tmp_path / "s.md").read_text()
    r = run_cli("report", "--facts", str(FIXTURES / "facts" / CPU), "--smoke", "-o", str(tmp_path / "t"))
    assert r.returncode == 2 and "--smoke runs on this machine" in r.stderr


def test_report_smoke_section_from_a_real_smoke_result():
    """A real smoke result (recorded here: `cudadoctor smoke --device cpu --synthetic --epochs 1` with
    torch 2.14.1) renders as an escaped table, and its paths are redacted with the rest."""
    from cudadoctor.commands.report import ticket_markdown

    result = json.loads((FIXTURES / "report" / "smoke-cpu-synthetic-torch2141.json").read_text())
    assert result["status"] == "pass"
    result["python"] = f"{HOME}/venv/bin/python"
    result["stages"][0]["message"] += " <img src=x> [l](https://evil.example)"
    facts = planted_facts()
    report = diagnose(facts, REG)
    report.extra["smoke"] = result
    report = redact_report(report, redactor_for([facts]))
    md = ticket_markdown(report, "r.json")
    section = md.split("### Smoke test", 1)[1]
    assert "Result: **PASS**" in section and "| device | pass | cpu |" in section.replace("\\", "")
    h = gfm(md)
    assert "<img" not in h and 'href="https://evil' not in h
    assert not leaks(md) and report.extra["smoke"]["python"] == "~/venv/bin/python"


def test_triage_and_report_from_collect_env(tmp_path):
    env = sorted((FIXTURES / "collect_env").glob("*.txt"))[0]
    r = run_cli("triage", "--from-collect-env", str(env), "--format", "json", "Torch not compiled with CUDA enabled")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["with_facts"] is True
    r = run_cli("report", "--from-collect-env", str(env), "-o", str(tmp_path / "ce"))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "ce.json").read_text())["facts"]["origin"] == "collect_env"
    r = run_cli("triage", "--from-collect-env", str(env), "--facts", str(FIXTURES / "facts" / CPU), "x")
    assert r.returncode == 2 and "one source of facts" in r.stderr


def test_report_output_takes_placeholders(tmp_path):
    r = run_cli("report", "--facts", str(FIXTURES / "facts" / CPU), "-o", str(tmp_path / "r-{host}-{job}"),
                env={"SLURM_JOB_ID": "4711"})
    assert r.returncode == 0, r.stderr
    host = socket.gethostname().split(".")[0]
    assert (tmp_path / f"r-{host}-4711.json").is_file() and (tmp_path / f"r-{host}-4711.md").is_file()
    r = run_cli("report", "--facts", str(FIXTURES / "facts" / CPU), "-o", str(tmp_path / "r-{nope}"))
    assert r.returncode == 2 and r.stderr.startswith("cudadoctor: error:") and len(r.stderr.splitlines()) == 1
