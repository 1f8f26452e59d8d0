"""Mooncake: ``mooncake build`` from source into the target environment through the transaction
(build.py) and the mooncake_master's address and HTTP endpoints (master.py).

Entry points: ``build.run_build``, ``master``."""
