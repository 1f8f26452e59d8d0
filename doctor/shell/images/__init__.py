"""Container images read without running them: a ``docker save`` or OCI tarball (archive.py), an
image from the Docker engine (daemon.py, the optional docker SDK), the read-only view the probes
read through (view.py) and the image's interpreter and sys.path (python.py). ``check`` without
``--image`` never imports this package.

Entry points: ``archive.Reader``, ``daemon``, ``view.build``, ``python.probe_static_python``."""
