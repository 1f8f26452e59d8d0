"""Loaded by every rank of the collective tests (PYTHONPATH): the rank named by
SMOKE_TEST_HANG_RANK stands for a device that never completes its all_reduce."""
import os
import time

if os.environ.get("RANK") == os.environ.get("SMOKE_TEST_HANG_RANK"):
    import torch.distributed as dist

    def _hang(*args, **kwargs):
        time.sleep(3600)

    dist.all_reduce = _hang
