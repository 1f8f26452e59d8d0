"""Probes: one module per layer, each reading through ``Host`` (``base.Probe``), listed in
``all_probes``, run by ``collect``. They observe and never judge."""
