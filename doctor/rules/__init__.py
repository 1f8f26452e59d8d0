"""Rules: pure judgement of facts against the matrix, one record per rule (``base.Rule``),
listed in ``all_rules``, run by ``engine``. No I/O, no imports from shell/ or probes/."""
