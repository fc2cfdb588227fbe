"""-o placeholders and atomic writes (cudadoctor/outpath.py, used by every command's -o)."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import threading

import pytest

from conftest import FIXTURES, run_cli
from cudadoctor.outpath import OutputPathError, expand, sanitize, write_atomic

NOW = dt.datetime(2026, 11, 22, 4, 5, 6, tzinfo=dt.timezone.utc)
NODRIVER = str(FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json")


def ex(template, env=None, host="node017.cluster.example"):
    return expand(template, env=env or {}, now=NOW, hostname=lambda: host, pid=4242)


def test_plain_path_unchanged():
    assert ex("/shared/reports/report.json") == "/shared/reports/report.json"


def test_time_and_host_placeholders():
    assert ex("/r/{host}-{date}-{time}.json") == "/r/node017-20261122-040506.json"
    assert ex("/r/{fqdn}_{datetime}_{pid}.json") == "/r/node017.cluster.example_20261122T040506Z_4242.json"


def test_date_is_utc():
    # 23:30 at UTC-5 on the 21st is the 22nd in UTC.
    local = dt.datetime(2026, 11, 21, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    assert expand("{date}", env={}, now=local, hostname=lambda: "h") == "20261122"


def test_slurm_variables():
    env = {"SLURM_PROCID": "7", "SLURM_NODEID": "3", "SLURM_JOB_ID": "123456", "SLURM_LOCALID": "1"}
    assert ex("{job}/{node}-{rank}-{local_rank}.json", env) == "123456/3-7-1.json"


def test_torchrun_variables_when_no_slurm():
    assert ex("{rank}-{node}-{local_rank}", {"RANK": "5", "GROUP_RANK": "1", "LOCAL_RANK": "2"}) == "5-1-2"


def test_slurm_wins_over_generic_rank():
    assert ex("{rank}", {"SLURM_PROCID": "1", "RANK": "9"}) == "1"


def test_env_placeholder():
    assert ex("/r/{env:NODE_NAME}.json", {"NODE_NAME": "gpu-node-a"}) == "/r/gpu-node-a.json"


def test_address_hostname_kept_whole():
    assert ex("{host}", host="10.1.2.3") == "10.1.2.3"


@pytest.mark.parametrize("template,needle", [
    ("{bogus}.json", "unknown placeholder {bogus}"),
    ("{rank}.json", "{rank} needs one of SLURM_PROCID"),
    ("{job}.json", "{job} needs one of SLURM_JOB_ID"),
    ("{env:NODE_NAME}.json", "NODE_NAME is not set"),
    ("{env:1x}.json", "not an environment variable name"),
    ("{host.json", "unmatched '{'"),
    ("host}.json", "unmatched '}'"),
])
def test_bad_templates(template, needle):
    with pytest.raises(OutputPathError) as e:
        ex(template)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)


def test_literal_braces():
    assert ex("a{{b}}-{host}") == "a{b}-node017"


@pytest.mark.parametrize("value,expected", [
    ("../../etc/passwd", "_._.._etc_passwd"),
    ("..", "_"),
    (".", "_"),
    ("", "_"),
    ("a/b\\c", "a_b_c"),
    ("node 1;rm -rf", "node_1_rm_-rf"),
    (".hidden", "_hidden"),
    ("ok-1.2_3+x", "ok-1.2_3+x"),
])
def test_sanitize(value, expected):
    assert sanitize(value) == expected


def test_values_cannot_add_directories():
    out = ex("/r/{env:X}.json", {"X": "../../../tmp/evil"})
    assert out.startswith("/r/") and out.count("/") == 2, out


def test_write_atomic_creates_dir_and_leaves_no_temp(tmp_path):
    target = tmp_path / "a" / "b" / "r.json"
    write_atomic(str(target), "hello")
    assert target.read_text() == "hello"
    assert os.listdir(target.parent) == ["r.json"]
    mode = target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # not a temporary file's 0600


def test_write_atomic_reader_never_sees_partial(tmp_path):
    """A reader polling the file while it is rewritten sees only whole documents."""
    target = tmp_path / "r.json"
    big = [json.dumps({"i": i, "pad": "x" * 400_000}) for i in range(2)]
    write_atomic(str(target), big[0])
    stop = threading.Event()
    seen = []

    def reader():
        while not stop.is_set():
            seen.append(len(target.read_text()))

    t = threading.Thread(target=reader)
    t.start()
    for i in range(30):
        write_atomic(str(target), big[i % 2])
    stop.set()
    t.join()
    assert seen and set(seen) <= {len(big[0]), len(big[1])}


def test_write_atomic_failure_leaves_no_temp(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "r.json").mkdir()  # renaming a file over a directory fails
    with pytest.raises(OSError):
        write_atomic(str(d / "r.json"), "x")
    assert os.listdir(d) == ["r.json"]


def test_check_o_host_date(tmp_path):
    r = run_cli("check", "--facts", NODRIVER, "--format", "json", "-o", str(tmp_path / "out" / "{host}-{date}.json"))
    assert r.returncode == 1, r.stderr  # the fixture has an error finding
    files = os.listdir(tmp_path / "out")
    host = socket.gethostname().split(".")[0]
    today = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d")
    assert len(files) == 1
    name = files[0]
    assert name.startswith(sanitize(host) + "-") and name.endswith(".json")
    assert name[len(sanitize(host)) + 1:-5] in {today, (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=1)).strftime("%Y%m%d")}
    doc = json.loads((tmp_path / "out" / name).read_text())
    assert doc["kind"] == "cudadoctor-report"
    assert f"wrote {tmp_path / 'out' / name}" in r.stderr  # the real path, not the template


def test_check_o_slurm_rank(tmp_path):
    r = run_cli("check", "--facts", NODRIVER, "--format", "json", "-o", str(tmp_path / "{job}" / "{node}-{rank}.json"),
                env={"SLURM_JOB_ID": "991", "SLURM_NODEID": "2", "SLURM_PROCID": "5"})
    assert r.returncode == 1, r.stderr
    assert json.loads((tmp_path / "991" / "2-5.json").read_text())["kind"] == "cudadoctor-report"


def test_check_o_unknown_placeholder_is_one_line_exit_2(tmp_path):
    r = run_cli("check", "--facts", NODRIVER, "-o", str(tmp_path / "{hots}.json"))
    assert r.returncode == 2
    assert r.stderr.startswith("cudadoctor: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "unknown placeholder {hots}" in r.stderr
    assert not list(tmp_path.iterdir())


def test_check_o_unset_rank_is_exit_2(tmp_path):
    env = {k: "" for k in ("SLURM_PROCID", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")}
    r = run_cli("check", "--facts", NODRIVER, "-o", str(tmp_path / "{rank}.json"), env=env)
    assert r.returncode == 2 and "{rank} needs one of" in r.stderr


def test_collect_o_placeholders(tmp_path):
    r = run_cli("collect", "--quick", "-o", str(tmp_path / "{env:MYNODE}.json"), env={"MYNODE": "gpu/node 7"})
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "gpu_node_7.json").read_text())["kind"] == "cudadoctor-facts"


def test_write_atomic_writes_into_a_pipe_or_device_and_leaves_it_one(tmp_path):
    """`-o /dev/null` as root once replaced /dev/null with a regular file (the rename of the atomic write)."""
    import stat
    import threading

    from cudadoctor.outpath import write_atomic

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, encoding="utf-8").read()))
    reader.start()
    write_atomic(str(fifo), "report\n")
    reader.join(5)
    assert got == ["report\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_write_atomic_through_a_symlink_keeps_the_link(tmp_path):
    from cudadoctor.outpath import write_atomic

    target = tmp_path / "reports" / "node.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    write_atomic(str(link), "new")
    assert link.is_symlink() and target.read_text() == "new"
