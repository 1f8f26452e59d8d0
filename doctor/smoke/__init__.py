"""The pure core of `ascend-doctor smoke`: what the stage results mean.

Nothing here touches the world (no files, processes or sockets; tests run it with plain data):
events.py reads the lines the target scripts print, stats.py and endpoint.py compute the
serving figures the way `vllm bench serve` defines them, golden.py compares greedy outputs,
collective.py turns all_reduce timings into bandwidths and names a rank that hung, soak.py finds
a steady memory climb, slo.py parses and applies --slo, config.py reads the stage configuration,
vllmlog.py reads vllm's start-up log and result.py turns each stage into its finding.
"""
