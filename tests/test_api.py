"""The Python API for notebooks (cudadoctor/api.py): result objects, their rendering, and a real
notebook executed by a real Jupyter kernel (nbclient + ipykernel, test-only dependencies)."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from conftest import FIXTURES, REPO, load_fixture

import cudadoctor

NODRIVER = FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json"


def private_facts() -> dict:
    """A recorded report's facts with a user's home, a host name and a GPU UUID in them."""
    facts = load_fixture("hgx-8x-h100-ecc.json")
    facts["python"]["executable"] = "/home/alice/proj/.venv/bin/python"
    facts["python"]["prefix"] = "/home/alice/proj/.venv"
    facts.setdefault("system", {})["hostname"] = "gpu-box-17"
    return facts


def test_import_is_cheap_and_lazy():
    code = ("import sys, cudadoctor; print(sorted(m for m in sys.modules if m.startswith('cudadoctor'))); "
            "print(callable(cudadoctor.check), callable(cudadoctor.smoke), callable(cudadoctor.devices))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    mods, calls = out.splitlines()
    assert mods == "['cudadoctor']"  # nothing else imported by `import cudadoctor`
    assert calls == "True True True"


def test_check_result_from_recorded_facts():
    r = cudadoctor.check(facts=str(NODRIVER))
    assert [f.code for f in r.findings] == ["no-nvidia-driver"]
    assert r.ok is False and r.exit_code == 1 and r.verdict["state"] == "no"
    assert r.to_dict()["summary"] == r.verdict
    assert repr(r) == r.render("text") and "✗ no-nvidia-driver:" in repr(r)
    md = r._repr_markdown_()
    assert md.startswith("## cudadoctor report") and "no-nvidia-driver" in md


class _Cells(HTMLParser):
    """The text of each table cell and <pre> of an HTML fragment; fails on unbalanced tags."""

    def __init__(self) -> None:
        super().__init__()
        self.stack, self.rows, self.pre = [], [], []

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)
        if tag == "tr":
            self.rows.append([])
        if tag == "td":
            self.rows[-1].append("")
        if tag == "pre":
            self.pre.append("")

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"unbalanced </{tag}> in {self.stack}"
        self.stack.pop()

    def handle_data(self, data):
        if "td" in self.stack:
            self.rows[-1][-1] += data
        if "pre" in self.stack:
            self.pre[-1] += data


def parse_html(text: str) -> _Cells:
    p = _Cells()
    p.feed(text)
    p.close()
    assert not p.stack, p.stack
    return p


def test_check_html_shows_areas_findings_and_fix():
    r = cudadoctor.check(facts=str(NODRIVER))
    cells = parse_html(r._repr_html_())
    by_area = {row[1]: (row[0], row[2]) for row in cells.rows}
    assert by_area["NVIDIA driver"][0] == "[✗]" and "not available" in by_area["NVIDIA driver"][1]
    assert by_area["GPUs"] == ("[–]", "none visible")
    assert cells.pre == ["\n".join(r.findings[0].fix.commands)]


def test_every_output_is_redacted_unless_show_pii():
    r = cudadoctor.check(facts=private_facts())
    for out in (repr(r), r._repr_html_(), r._repr_markdown_(), json.dumps(r.to_dict())):
        assert "alice" not in out and "gpu-box-17" not in out
    assert "gpu-box-17" not in json.dumps(cudadoctor.devices(facts=private_facts()).to_dict())
    shown = cudadoctor.check(facts=private_facts(), show_pii=True)
    assert "/home/alice/proj/.venv" in json.dumps(shown.to_dict())


def test_html_escapes_untrusted_text():
    facts = private_facts()
    facts["nvml"]["devices"][0]["name"] = "<script>alert(1)</script>"
    html = cudadoctor.check(facts=facts)._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    parse_html(html)


def test_devices_result_and_the_devices_module_stay_one_name():
    import cudadoctor.devices as mod  # the submodule, imported the ordinary way

    assert mod is cudadoctor.devices and callable(mod) and hasattr(mod, "build")
    import cudadoctor.smoke.runner as sr

    assert callable(cudadoctor.smoke) and cudadoctor.smoke.runner is sr
    d = cudadoctor.devices(facts=str(FIXTURES / "facts" / "hgx-8x-h100-ecc.json"))
    assert len(d.devices) == 8 and d.ok is False  # a GPU with ECC errors fails
    assert "Device 0" in repr(d) and "### Device 0" in d._repr_markdown_()
    assert parse_html(d._repr_html_()).pre == [repr(d)]


def test_bad_input_is_a_value_error_with_one_line():
    with pytest.raises(ValueError, match="not an executable file"):
        cudadoctor.check(python="/nonexistent/python")
    with pytest.raises(ValueError, match="expected cuda, cuda:N, all or cpu"):
        cudadoctor.smoke(device="gpu")
    with pytest.raises(ValueError):
        cudadoctor.check(facts={"not": "facts"})


def test_smoke_on_cpu_synthetic():
    from conftest import torch_python

    py = torch_python()
    if py is None:
        pytest.skip("no interpreter with torch")
    r = cudadoctor.smoke("cpu", python=py, synthetic=True, epochs=1, timeout=240)
    assert r.status in ("pass", "fail") and r.stages, r.to_dict()
    assert r.ok == (r.status == "pass")
    assert repr(r) == r.render("text") and parse_html(r._repr_html_()).pre == [repr(r)]


# --- a real notebook, executed by a real kernel --------------------------------------------------

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")


def execute(nb, tmp_path, timeout: int = 240):
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    return nb


def outputs(cell) -> dict:
    data = {}
    for o in cell.outputs:
        if o.output_type in ("execute_result", "display_data"):
            data.update(o.data)
        elif o.output_type == "stream":
            data[o.name] = data.get(o.name, "") + o.text
        elif o.output_type == "error":
            raise AssertionError(f"cell failed: {o.ename}: {o.evalue}")
    return data


def test_notebook_renders_a_recorded_report(tmp_path):
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(private_facts()))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import cudadoctor\ncudadoctor.check(facts={str(facts)!r})"),
                nbformat.v4.new_code_cell(f"cudadoctor.devices(facts={str(facts)!r})")]
    execute(nb, tmp_path)
    out = outputs(nb.cells[0])
    assert {"text/html", "text/markdown", "text/plain"} <= set(out)
    cells = parse_html(out["text/html"])
    assert any(row[1] == "GPUs" and "8 × NVIDIA H100" in row[2] for row in cells.rows)
    assert "gpu-ecc-errors" in out["text/html"] and "gpu-ecc-errors" in out["text/markdown"]
    for text in out.values():
        assert "alice" not in text and "gpu-box-17" not in text
    dev = outputs(nb.cells[1])
    assert "Device 7" in dev["text/plain"] and "<pre>" in dev["text/html"]


def test_docs_example_notebook_runs_live(tmp_path):
    """docs/examples/check.ipynb, as a user runs it: a live check of the kernel's own Python."""
    with open(REPO / "docs" / "examples" / "check.ipynb", encoding="utf-8") as f:
        nb = nbformat.read(f, as_version=4)
    execute(nb, tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    report = outputs(code[0])
    cells = parse_html(report["text/html"])
    labels = [row[1] for row in cells.rows]
    assert labels[:4] == ["System", "NVIDIA driver", "GPUs", "PyTorch"]
    torch_row = dict((row[1], row[2]) for row in cells.rows)["PyTorch"]
    from importlib.metadata import PackageNotFoundError, version

    try:
        want = version("torch")  # this test interpreter is the kernel's: the report names its torch
    except PackageNotFoundError:
        want = "not installed"  # a test venv without torch: the report says so
    assert want in torch_row, torch_row
    assert "can PyTorch use your NVIDIA GPU?" in report["text/html"]
    printed = outputs(code[1])["stdout"]
    assert printed.splitlines()[0] in report["text/plain"]
