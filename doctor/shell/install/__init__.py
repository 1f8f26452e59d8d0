"""The installers, without changing anything: how pip and uv are spelled for a target
(installer.py), what their resolver would do (resolver.py), the package index the user's pip is
configured for (index.py), the files a download left (downloads.py), the core metadata of the
files a resolver chose (wheelmeta.py), and bundles for air-gapped nodes (bundle.py). The
transaction that installs is doctor/shell/transaction/.

Entry points: ``installer.detect`` (a ``Choice``: who resolves, downloads and installs),
``resolver.resolve_pip`` / ``resolve_uv``, ``index.client_from_pip``, ``bundle``."""
