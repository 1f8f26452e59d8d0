"""The smoke stages' I/O: the target scripts run by the target interpreter (scripts.py), the
endpoint benchmark client (endpoint_bench.py), memory samples during a soak (soak.py) and the
kvpool stage's reads (kvpool_bench.py). The judgement is doctor/smoke/.

Entry points: ``scripts``, ``endpoint_bench.run_bench``, ``soak``, ``kvpool_bench``, ``files``."""
