"""Profiles: finding and reading a profile's files, bounded and streamed (files.py), and capturing
one from a running vllm server (collect.py). The judgement is doctor/profile/.

Entry points: ``files.find``, ``collect.collect``."""
