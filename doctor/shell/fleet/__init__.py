"""Reaching the nodes of a deployment to run the doctor installed there: ssh and kubectl exec
(transport.py), a Ray cluster (ray_cluster.py) and the task shipped to each Ray node
(ray_task.py).

Entry points: ``transport.collect_ssh`` / ``collect_kubectl``, ``ray_cluster.collect_ray``."""
