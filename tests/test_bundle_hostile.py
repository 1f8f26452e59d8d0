"""Bundles that were tampered with (issue 21, items 11 and 14): the requirements file is read by
the doctor itself (a regular file, capped, one hash-pinned line per file: no ``-r``/``-c`` to a
FIFO or /dev/zero), a manifest of any other shape is refused, and each is one line and exit 2
before anything changes, with no third-party traceback."""
import hashlib
import json
import os
import subprocess
import sys

import pytest
from fakehost import REPO
from fakehost.scenarios import ascend_host

from doctor.errors import UsageError
from doctor.shell.install import bundle
import doctor_fork

WHEEL = "vllm-0.11.0-py3-none-any.whl"


def make_bundle(d, python_version="3.11", arch="x86_64", requirements=None, edit=None):
    """A bundle directory as `fix --bundle DIR` writes it (manifest.json, requirements.txt,
    wheels/), holding one wheel file."""
    wheels = d / "wheels"
    wheels.mkdir(parents=True)
    data = b"PK\x03\x04 a wheel"
    (wheels / WHEEL).write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    manifest = {"schema_version": 1, "created": "2026-01-01T00:00:00",
                "target": {"vllm_ascend": "0.11.0rc3", "matrix_row": "v0.11.0rc3"},
                "platform": {"platforms": [f"manylinux_2_28_{arch}"], "python_version": python_version,
                             "abis": ["cp311", "abi3", "none"], "implementation": "cp"},
                "arch": arch,
                "files": [{"filename": WHEEL, "name": "vllm", "version": "0.11.0", "sha256": digest, "size": len(data)}]}
    if edit is not None:
        manifest = edit(manifest)
    (d / "manifest.json").write_text(json.dumps(manifest))
    (d / "requirements.txt").write_text(requirements if requirements is not None
                                        else f"vllm==0.11.0 --hash=sha256:{digest}\n")
    return d


def test_a_bundle_as_written_is_accepted(tmp_path):
    d = make_bundle(tmp_path / "b")
    bundle.verify_files(d, bundle.load_manifest(d))
    long = make_bundle(tmp_path / "c", requirements="# pins\nvllm==0.11.0 \\\n    --hash=sha256:"
                       + hashlib.sha256(b"PK\x03\x04 a wheel").hexdigest() + "\n")
    bundle.verify_files(long, bundle.load_manifest(long))


@pytest.mark.parametrize("line, words", [
    ("-r {fifo}", "an option (another file, an index)"),
    ("-r /dev/zero", "an option (another file, an index)"),
    ("--requirement=/etc/passwd", "an option (another file, an index)"),
    ("-c /dev/zero", "an option (another file, an index)"),
    ("-e git+https://example.invalid/x", "an option (another file, an index)"),
    ("vllm>=0.11", "not a hash-pinned name==version"),
    ("vllm==0.11.0 --hash=sha256:zz", "not a hash-pinned name==version"),
    ("vllm @ https://example.invalid/x.whl", "not a hash-pinned name==version"),
])
def test_a_requirements_line_other_than_a_pin_is_refused_without_reading_anything(tmp_path, line, words):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    d = make_bundle(tmp_path / "b", requirements=line.format(fifo=fifo) + "\n")
    with pytest.raises(UsageError) as e:
        bundle.verify_files(d, bundle.load_manifest(d))
    assert "requirements.txt is not a bundle's hash-pinned requirements: line 1 is " + words in str(e.value)


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge", "binary", "disagrees"])
def test_the_requirements_file_itself_is_read_as_data(tmp_path, kind):
    d = make_bundle(tmp_path / "b")
    req = d / "requirements.txt"
    req.unlink()
    if kind == "fifo":
        os.mkfifo(req)
    elif kind == "zero":
        os.symlink("/dev/zero", req)
    elif kind == "huge":
        req.write_bytes(b"# x\n" * (2 << 20))
    elif kind == "binary":
        req.write_bytes(b"\xff\xfe\x00garbage")
    else:
        req.write_text("vllm==0.11.0 --hash=sha256:" + "0" * 64 + "\n")
    with pytest.raises(UsageError) as e:
        bundle.verify_files(d, bundle.load_manifest(d))
    assert str(e.value).startswith(f"--bundle {d}: ")


@pytest.mark.parametrize("edit", [
    lambda m: dict(m, files=[5]),
    lambda m: dict(m, files=[dict(m["files"][0], sha256=None)]),
    lambda m: dict(m, files=[dict(m["files"][0], size="12")]),
    lambda m: dict(m, files=[{"filename": ["x"], "name": "vllm", "version": "1"}]),
    lambda m: dict(m, target=["0.11.0rc3"]),
    lambda m: dict(m, platform={"platforms": [1], "python_version": "3.11"}),
    lambda m: dict(m, platform={"platforms": "manylinux_2_28_x86_64", "python_version": 3.11}),
    lambda m: dict(m, arch=["x86_64"]),
    lambda m: dict(m, schema_version=True),
    lambda m: [m],
], ids=["file-int", "sha-none", "size-str", "filename-list", "target-list", "platforms-int", "platform-types",
        "arch-list", "schema-bool", "list"])
def test_a_manifest_of_another_shape_is_one_line(tmp_path, edit):
    d = make_bundle(tmp_path / "b", edit=edit)
    with pytest.raises(UsageError) as e:
        bundle.load_manifest(d)
    assert "manifest.json is not an ascend-doctor bundle manifest (schema 1): " in str(e.value)


def test_a_wheel_that_is_a_fifo_or_a_link_out_is_refused(tmp_path):
    d = make_bundle(tmp_path / "b")
    wheel = d / "wheels" / WHEEL
    wheel.unlink()
    os.mkfifo(wheel)
    with pytest.raises(UsageError) as e:
        bundle.verify_files(d, bundle.load_manifest(d))
    assert "is missing or not a regular file" in str(e.value)


@pytest.mark.parametrize("case", ["fifo-include", "zero-include", "unparsable", "manifest-shape"])
def test_fix_apply_with_a_tampered_bundle_is_one_line_exit_2(fake, tmp_path, case):
    """The command as a user runs it: nothing hangs, nothing is installed, no traceback."""
    ascend_host(fake, "0.11.0rc3")
    import platform

    py = subprocess.run([str(fake.python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                        capture_output=True, text=True, timeout=60).stdout.strip()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    requirements = {"fifo-include": f"-r {fifo}\n", "zero-include": "-r /dev/zero\n",
                    "unparsable": "vllm==0.11.0 --hash=sha256:\x00\n", "manifest-shape": None}[case]
    edit = (lambda m: dict(m, files=[7])) if case == "manifest-shape" else None
    d = make_bundle(tmp_path / "b", python_version=py, arch=platform.machine(), requirements=requirements, edit=edit)
    before = sorted(p.name for p in fake.site.iterdir())
    env = dict(fake.env, PYTHONPATH=str(REPO))
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fix", "--apply", "--yes", "--no-smoke", "--bundle", str(d),
                           *fake.args()], env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=120)
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith(f"ascend-doctor: error: --bundle {d}"), proc.stderr
    assert "Traceback" not in proc.stderr and "pip_api" not in proc.stderr
    assert sorted(p.name for p in fake.site.iterdir()) == before


# -- symlinks in a bundle (issue: attack2 items 1 and 2) ------------------------------------------

def _tree(root):
    """path -> sha256 of every file below ``root`` (links as their target's name)."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, root)] = ("-> " + os.readlink(p)) if os.path.islink(p) \
                else hashlib.sha256(open(p, "rb").read()).hexdigest()
    return out


def test_a_wheels_directory_linked_out_of_the_bundle_is_refused(tmp_path):
    """wheels -> a directory outside holding a file with its real sha256: nothing outside is
    read as the bundle's (verify_files once hashed /etc/passwd through wheels -> /etc)."""
    d = make_bundle(tmp_path / "b")
    outside = tmp_path / "outside"
    (d / "wheels").rename(outside)
    os.symlink(outside, d / "wheels")
    with pytest.raises(UsageError) as e:
        bundle.verify_files(d, bundle.load_manifest(d))
    assert str(e.value) == (f"--bundle {d}: wheels is missing or not a directory of the bundle "
                            "(a symlink: nothing below the bundle directory may be one)")
    assert "符号链接" in e.value.text("zh")


def test_a_manifest_or_requirements_linked_out_of_the_bundle_is_refused(tmp_path):
    d = make_bundle(tmp_path / "b")
    for name in ("manifest.json", "requirements.txt"):
        real = tmp_path / ("real-" + name)
        (d / name).rename(real)
        os.symlink(real, d / name)
    with pytest.raises(UsageError) as e:
        bundle.load_manifest(d)
    assert "cannot read manifest.json: a symlink" in str(e.value)
    os.unlink(d / "manifest.json")
    (tmp_path / "real-manifest.json").rename(d / "manifest.json")
    with pytest.raises(UsageError) as e:
        bundle.verify_files(d, bundle.load_manifest(d))
    assert "cannot read requirements.txt: a symlink" in str(e.value)


def test_the_bundle_directory_itself_may_be_a_link_the_user_typed(tmp_path):
    d = make_bundle(tmp_path / "b")
    os.symlink(d, tmp_path / "typed")
    typed = tmp_path / "typed"
    bundle.verify_files(typed, bundle.load_manifest(typed))


def test_a_wheel_larger_than_the_manifest_says_is_not_read_past_it(tmp_path):
    d = make_bundle(tmp_path / "b")
    (d / "wheels" / WHEEL).write_bytes(b"PK\x03\x04 a wheel" + b"\0" * 100)
    with pytest.raises(UsageError) as e:
        bundle.verify_files(d, bundle.load_manifest(d))
    assert "is not the 12 bytes the manifest says" in str(e.value)


def test_fix_apply_with_wheels_linked_out_is_exit_2_and_leaves_the_venv_byte_identical(fake, tmp_path):
    ascend_host(fake, "0.11.0rc3")
    import platform

    py = subprocess.run([str(fake.python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                        capture_output=True, text=True, timeout=60).stdout.strip()
    d = make_bundle(tmp_path / "b", python_version=py, arch=platform.machine())
    outside = tmp_path / "outside"
    (d / "wheels").rename(outside)
    os.symlink(outside, d / "wheels")
    venv = fake.python.parent.parent
    before = _tree(venv)
    env = dict(fake.env, PYTHONPATH=str(REPO))
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fix", "--apply", "--yes", "--no-smoke", "--bundle", str(d),
                           *fake.args()], env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=120)
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0] == (f"ascend-doctor: error: --bundle {d}: wheels is missing or not a directory "
                                            "of the bundle (a symlink: nothing below the bundle directory may be one)")
    assert _tree(venv) == before


# -- writing one: fix --bundle DIR ------------------------------------------------------------------

FAKE_PIP = r'''
import sys, os
dest = sys.argv[sys.argv.index("--dest") + 1]
mode = os.environ.get("FAKE_PIP_MODE", "ok")
if mode == "fail":
    sys.exit("ERROR: no matching distribution")
if mode == "swap":
    os.rename(dest, dest + ".gone")
    os.symlink(os.environ["FAKE_PIP_OUTSIDE"], dest)
    dest = dest + ".gone"
open(os.path.join(dest, "vllm-0.11.0-py3-none-any.whl"), "wb").write(b"PK\x03\x04 a wheel")
'''


def _write(directory, tmp_path, mode="ok", outside=None):
    import types

    from doctor.shell.install.resolver import TargetPlatform

    script = tmp_path.parent / (tmp_path.name + "-fake_pip.py")  # outside the trees compared
    script.write_text(FAKE_PIP)
    digest = hashlib.sha256(b"PK\x03\x04 a wheel").hexdigest()
    r = types.SimpleNamespace(filename=WHEEL, name="vllm", version="0.11.0", hashes={"sha256": digest})
    plan = types.SimpleNamespace(resolved_files=[r], steps=[], target="0.11.0rc3", row="v0.11.0rc3")
    tp = TargetPlatform(["manylinux_2_28_x86_64"], "3.11", ["cp311"])
    choice = types.SimpleNamespace(downloader=types.SimpleNamespace(prefix=[sys.executable, str(script)]))
    env = dict(os.environ, FAKE_PIP_MODE=mode, FAKE_PIP_OUTSIDE=str(outside or tmp_path))
    return bundle.write_bundle(str(directory), plan, tp, choice, env, 60, plan_json='{"plan": 1}')


@pytest.mark.parametrize("planted", ["manifest.json", "requirements.txt", "plan.json", "wheels", "dangling", "file"])
def test_writing_a_bundle_into_a_directory_with_anything_in_it_is_refused(tmp_path, planted):
    """t_wb: DIR/manifest.json and DIR/requirements.txt linked to files outside were truncated
    and overwritten. Any entry (a symlink included) now makes DIR not empty: nothing is written."""
    d, outside = tmp_path / "b", tmp_path / "outside"
    d.mkdir()
    outside.mkdir()
    victim = outside / "victim"
    victim.write_text("VICTIM\n")
    if planted == "dangling":
        os.symlink(tmp_path / "nothing", d / "x")
    elif planted == "file":
        (d / "notes").write_text("mine\n")
    elif planted == "wheels":
        os.symlink(outside, d / "wheels")
    else:
        os.symlink(victim, d / planted)
    before = _tree(tmp_path)
    with pytest.raises(UsageError) as e:
        _write(d, tmp_path)
    assert str(e.value) == f"--bundle {d}: the directory is not empty; give a new or empty directory"
    assert _tree(tmp_path) == before
    assert victim.read_text() == "VICTIM\n"


@pytest.mark.parametrize("new", [True, False])
def test_a_bundle_is_written_into_a_new_or_empty_directory_and_reads_back(tmp_path, new):
    d = tmp_path / "b"
    if not new:
        d.mkdir()
    manifest = _write(d, tmp_path)
    assert sorted(os.listdir(d)) == ["manifest.json", "plan.json", "requirements.txt", "wheels"]
    assert not any(os.path.islink(d / n) for n in os.listdir(d))
    assert (d / "plan.json").read_text() == '{"plan": 1}'
    assert manifest["files"][0]["size"] == 12
    bundle.verify_files(d, bundle.load_manifest(d))


def test_a_failed_download_leaves_the_directory_as_it_was(tmp_path):
    from doctor.errors import DoctorError

    d = tmp_path / "b"
    with pytest.raises(DoctorError):
        _write(d, tmp_path, mode="fail")
    assert not os.path.lexists(d)
    d.mkdir()
    with pytest.raises(DoctorError):
        _write(d, tmp_path, mode="fail")
    assert os.listdir(d) == []


def test_wheels_replaced_by_a_link_during_the_download_is_refused(tmp_path):
    d, outside = tmp_path / "b", tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep\n")
    with pytest.raises(UsageError) as e:
        _write(d, tmp_path, mode="swap", outside=outside)
    assert "cannot create wheels" in str(e.value)
    assert os.listdir(outside) == ["keep"] and (outside / "keep").read_text() == "keep\n"
    assert not (d / "manifest.json").exists()
