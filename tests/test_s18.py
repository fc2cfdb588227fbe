"""Session 18: a stated symptom inside a program's log is error text (readers/issue.py reads the kb rows marked
``stated_symptom``), and the nvcc tables' CUDA 11.7/11.8 rows (tests/test_kb_sources.py has the spot checks)."""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

from cudadoctor.errortext import kb_documents
from cudadoctor.readers import issue

# RVC's console when torch.cuda.is_available() is False (its configs/config.py prints the Chinese line), under the
# reporter's prose: a Windows venv, "all requirements are already satisfied", a 3090 the script does not see.
RVC = """3090 GPU not recognised
I cant get 3090 to be recognised by the script

running on windows with virtual enviroment and all requirements are already satisfied

using python 3.10

(myenv) H:\\RVC-beta>python infer-web.py
Use Language: en_US
没有发现支持的N卡, 使用CPU进行推理
Running on local URL:  http://0.0.0.0:7865
"""


def _error_lines(text: str) -> set:
    got = issue.read(text)
    lines = text.splitlines()
    out = set()
    for p in got["parts"]:
        if p["kind"] == "error":
            out.update(lines[i - 1] for i in range(p["lines"][0], p["lines"][1] + 1))
    return out


def test_a_programs_no_gpu_line_in_its_log_is_error_text(tmp_path):
    assert "没有发现支持的N卡, 使用CPU进行推理" in _error_lines(RVC)
    assert "Use Language: en_US" not in _error_lines(RVC)  # the log's other lines stay aside
    got = paste_findings(tmp_path, RVC)
    assert severities(got).get("cpu-only-torch") == "warning"


def test_the_same_log_without_the_symptom_names_no_cause(tmp_path):
    healthy = RVC.replace("没有发现支持的N卡, 使用CPU进行推理\n", "")
    got = paste_findings(tmp_path, healthy)
    assert "cpu-only-torch" not in codes(got), got


def test_the_rows_read_as_stated_symptoms_are_the_statement_rows():
    """Only statements of the symptom are marked (not the Windows or pip-command rows the checks also read)."""
    names = {n for _f, doc in kb_documents() for n, r in (doc.get("symptoms") or {}).items() if r.get("stated_symptom")}
    assert names == {"runs_on_cpu", "no_gpu_fallback", "torch_sees_no_cuda", "cpu_build_named", "cpu_build_said"}
