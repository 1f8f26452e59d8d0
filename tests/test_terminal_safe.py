"""Text from data never drives the terminal (issue 21, item 12): ESC sequences, CR, BEL and the
bidi controls planted in every source of data (package metadata, snapshots, image tags and
Dockerfile steps, fleet host names and values, logs, file names in error lines) are shown
escaped, rich markup in data is shown as written, and --json stays exact."""
import copy
import json
import os
import sys
from pathlib import Path

import pytest

import imagekit
from fakehost import REPO
from fakehost.dists import Stub

from doctor import textsafe
import doctor_fork

ESC = "\x1b]0;pwned\x07\x1b[2J"  # retitle the window, clear the screen
CR = "\roverwritten"
MARK = "[bold red]shout[/]"
FLEET = Path(__file__).parent / "data" / "fleet"


def run(*argv, env=None, stdin=None):
    e = dict(os.environ if env is None else env, PYTHONPATH=str(REPO))
    return doctor_fork.run([sys.executable, "-m", "doctor", *argv], capture_output=True, text=True, env=e, input=stdin,
                          timeout=180)


def assert_safe(text: str) -> None:
    """No control character but the line breaks; the planted ones visible as escapes."""
    bad = sorted({c for c in text if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f or c == "\u202e"})
    assert not bad, [hex(ord(c)) for c in bad]


def test_the_filter():
    assert textsafe.clean("a\x1b[2Jb\rc\x07d\ne\tf\u202eg\x9bh") == "a\\x1b[2Jb\\rc\\x07d\\ne\\tf\\u202eg\\x9bh"
    assert textsafe.clean_block("one\x1bc\ntwo\r") == "one\\x1bc\ntwo\\r"
    assert textsafe.clean("中文 torch 2.8.0 [fd00::1]") == "中文 torch 2.8.0 [fd00::1]"
    # bytes that were not UTF-8 (surrogateescape) shown as those bytes, other lone surrogates escaped
    assert textsafe.clean("m\udcff\udc9b2J \ud800") == "m\\xff\\x9b2J \\ud800"
    assert textsafe.clean_block("a\udc9b\nb") == "a\\x9b\nb"
    text = textsafe.json_safe(json.dumps({"k": "/x\udc9b\ud800y", "中": "文"}, ensure_ascii=False))
    assert json.loads(text.encode("utf-8")) == {"k": "/x\udc9b\ud800y", "中": "文"} and "文" in text
    assert textsafe.markup("root@[fd00::1] [bold]x[/]") == "root@\\[fd00::1] \\[bold]x\\[/]"
    from rich.console import Console
    from rich.text import Text

    c = Console(record=True, width=200)
    c.print(textsafe.markup("root@[fd00::1] [bold]x[/] \x1b[31m"))
    assert c.export_text().rstrip("\n") == "root@[fd00::1] [bold]x[/] \\x1b[31m"
    # the console's own net: a render site that forgot the filter still sends no ESC of data
    from doctor import terminal

    import io

    buf = io.StringIO()
    con = terminal.console(file=buf, force_terminal=True, width=200)
    con.print(Text("value " + ESC, style="bold"))
    out = buf.getvalue()
    assert "\\x1b]0;pwned" in out and "\x1b[1m" in out  # the style stays, the data's ESC is shown
    assert "\x1b]0;" not in out and "\x1b[2J" not in out


@pytest.fixture(scope="module")
def planted_snapshot(tmp_path_factory):
    """A node's snapshot with control characters and markup in its values: a package's name,
    version and requirement, the driver version, an environment value."""
    doc = json.loads((FLEET / "node1.json").read_text())
    dists = doc["packages"]["dists"]
    torch = dists["torch-npu"]
    torch["version"] = "2.8.0" + ESC
    evil = copy.deepcopy(torch)
    evil.update(name="evil" + ESC, display_name="evil" + CR + MARK, version="1.0",
                requires=["torch (==9.9" + ESC + ")", "vllm" + CR])
    dists["evil"] = evil
    doc["driver"]["version"] = "25.5.1" + CR + MARK
    doc["env"]["ASCEND_RT_VISIBLE_DEVICES"] = "0" + ESC
    path = tmp_path_factory.mktemp("planted") / "node1.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_snapshot_s_values_are_shown_escaped(planted_snapshot):
    proc = run("check", "--from", str(planted_snapshot), "-v")
    assert proc.returncode in (3, 4), proc.stderr
    assert_safe(proc.stdout)
    assert "\\x1b]0;pwned" in proc.stdout  # what was there, visible
    proc = run("check", "--from", str(planted_snapshot), "--json")
    doc = json.loads(proc.stdout)  # exact: JSON carries the value as it was
    assert any("2.8.0" + ESC == f.get("observed") for f in doc["findings"]) or ESC in json.dumps(doc, ensure_ascii=False)


def test_fleet_host_names_and_values(planted_snapshot, tmp_path):
    named = tmp_path / "root@[fd00::1].json"
    named.write_text(planted_snapshot.read_text())
    other = tmp_path / ("node2" + "\x1b[31m" + ".json")
    other.write_text((FLEET / "node2.json").read_text())
    proc = run("fleet", "compare", str(named), str(other))
    assert proc.returncode in (3, 4), proc.stderr
    assert "root@[fd00::1]" in proc.stdout  # a header is a name, never markup
    assert "node2\\x1b[31m" in proc.stdout
    assert_safe(proc.stdout)
    assert "2.8.0\\x1b]0;pwned" in proc.stdout


def test_explain_shows_log_lines_escaped(tmp_path):
    log = tmp_path / "serve.log"
    log.write_text("INFO start\n"
                   "RuntimeError: ACL stream synchronize failed, error code is 507035" + "\x1bc" + CR + "\n"
                   "ERROR [bold]x[/] \x1b[2J EZ9999: Inner Error!\n")
    proc = run("explain", str(log))
    assert proc.returncode in (0, 3, 4), proc.stderr
    assert_safe(proc.stdout)
    assert "\\x1bc\\roverwritten" in proc.stdout


def test_an_error_line_quotes_data_escaped(tmp_path):
    proc = run("check", "--image-tar", str(tmp_path / ("x" + ESC + ".tar")))
    assert proc.returncode == 2
    assert_safe(proc.stderr)
    assert "\\x1b]0;pwned" in proc.stderr


@pytest.fixture(scope="module")
def planted_image(tmp_path_factory):
    """An image whose tag, Dockerfile steps and package metadata carry ESC, CR and markup."""
    img = imagekit.Image(architecture="amd64")
    img.run("ADD base", imagekit.base_os("amd64") + imagekit.python_ops(), "gzip")
    evil = Stub("torch", "2.8.0")
    ops = imagekit.dist_ops([evil])
    meta_path = f"{imagekit.SITE}/{evil.dist_info_name}/METADATA"
    ops = [op for op in ops if op[1] != meta_path] + [
        ("file", meta_path, f"Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0\nRequires-Dist: numpy{ESC}\n"
                            f"Requires-Dist: sympy (>=1{CR})\n"),
        ("file", f"{imagekit.SITE}/evil-1.0.dist-info/METADATA",
         f"Metadata-Version: 2.1\nName: evil{ESC}\nVersion: 1.0{CR}\nRequires-Dist: torch (==9.9{ESC}){MARK}\n")]
    img.run(f"RUN pip install torch==2.8.0 {ESC} {MARK}{CR}", ops, "gzip")
    return imagekit.docker_save(img, tmp_path_factory.mktemp("planted-image") / "img.tar",
                                tags=["registry.local/x" + ESC + ":1"])


@pytest.mark.parametrize("command", ["check", "fix"])
def test_an_image_s_tags_steps_and_metadata_are_shown_escaped(planted_image, command):
    extra = ["--offline"] if command == "fix" else ["-v"]
    proc = run(command, "--image-tar", str(planted_image), *extra)
    assert proc.returncode in (0, 3, 4), proc.stderr
    assert_safe(proc.stdout)
    assert_safe(proc.stderr)
    assert "registry.local/x\\x1b]0;pwned" in proc.stdout
    if command == "check":
        assert "[bold red]shout[/]" in proc.stdout  # markup in a step is shown as written
