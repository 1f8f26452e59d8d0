"""`ascend-doctor explain`, the pure part: what the lines of a log mean.

catalog      signatures, vendor code tables and classifiers -> matchers for the log scanner
classifiers  generic causes that generalise past any list (missing library, ABI mismatch, ...)
answers      the Answer record and how hits become answers (ranking, suppression)
nodes        many logs of one job: where a multi-rank failure started
host         answers combined with the findings of `check` on this host
render       text and JSON

Nothing here reads files or runs processes; doctor/shell/host/logread.py streams the bytes and
doctor/usecases/explain.py wires the two together.
"""
