"""doctor/shell/images/: a small image built on a temporary directory (tests/imagekit.py writes
what `docker save` writes), read without extracting it and merged into the view the probes read."""
import os
from pathlib import Path

import pytest
from imagekit import Image, docker_save

from doctor.parse import oci
from doctor.shell.images.archive import ArchiveError, Reader, Workspace
from doctor.shell.images.view import build


def _image() -> Image:
    return (Image(env={"PATH": "/usr/local/bin:/usr/bin:/bin"})
            .run("ADD base", [("dir", "/etc"), ("file", "/etc/os-release", b"ID=ubuntu\n"),
                              ("file", "/opt/tmp/cache.bin", b"x" * 64), ("dir", "/usr/local/bin")])
            .run("RUN pip", [("whiteout", "/opt/tmp/cache.bin"), ("dir", "/usr/local/lib/python3.11/site-packages/a-1.0.dist-info"),
                             ("file", "/usr/local/lib/python3.11/site-packages/a-1.0.dist-info/METADATA", b"Name: a\n", 0o755),
                             ("symlink", "/usr/local/lib/python3.11/site-packages/a-1.0.dist-info/RECORD",
                              "/usr/local/lib/python3.11/site-packages/a-1.0.dist-info/METADATA")]))


def _view(archive: Path, tmp_path: Path):
    ws = Workspace(str(tmp_path))
    chosen = {}

    def choose(contents):
        chosen["sel"] = oci.select(contents.doc, contents.names, None, "aarch64")
        return chosen["sel"].manifest.layers

    contents = Reader(ws).read_path(str(archive), choose)
    layers = chosen["sel"].manifest.layers
    return build(ws, contents, layers, lambda wanted: Reader(ws).fetch(str(archive), wanted), ["/usr/local/bin"])


@pytest.mark.parametrize("layout", ["docker25", "legacy"])
def test_the_layers_merge_into_one_read_only_tree(tmp_path, layout):
    archive = docker_save(_image(), tmp_path / f"{layout}.tar", tags=["seed:1"], layout=layout)
    view = _view(archive, tmp_path)
    root = Path(view.root)
    assert (root / "etc/os-release").read_text() == "ID=ubuntu\n"
    assert view.tree.get("/opt/tmp/cache.bin") is None  # deleted by the second layer
    site = root / "usr/local/lib/python3.11/site-packages"
    assert view.layer_of("/etc/os-release") == 1
    assert view.layer_of("/usr/local/lib/python3.11/site-packages/a-1.0.dist-info/METADATA") == 2
    assert os.readlink(site / "a-1.0.dist-info/RECORD") == "METADATA"  # an absolute link, made relative to the view
    assert (site / "a-1.0.dist-info/RECORD").read_text() == "Name: a\n"
    assert not os.stat(site / "a-1.0.dist-info/METADATA").st_mode & 0o111  # nothing in the image can be run


def test_not_an_archive_is_an_archive_error(tmp_path):
    junk = tmp_path / "junk.tar"
    junk.write_bytes(b"not a tar at all" * 100)
    with pytest.raises(ArchiveError):
        Reader(Workspace(str(tmp_path))).read_path(str(junk), lambda contents: [])
