"""One rank of the collective stage, run by the target interpreter (see smoke_common).

The doctor starts one process per device with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
set. Each rank joins a torch.distributed process group (hccl on NPUs, gloo on the CPU), checks
that a sum all_reduce gives the right answer, then times all_reduce for each size. It reports
"start" before and "size" after every size, so the doctor can name a rank that stops answering.
"""
import argparse
import datetime
import os
import time

from smoke_common import emit, import_torch, step, synchronize

state = {}


def do_import(device):
    torch, versions = import_torch(device)
    import torch.distributed as dist
    state["torch"], state["dist"] = torch, dist
    return ", ".join("%s %s" % kv for kv in versions.items()), {"versions": versions}


def do_init(args):
    torch, dist = state["torch"], state["dist"]
    if args.device == "npu":
        torch.npu.set_device(args.device_id)
        state["dev"] = torch.device("npu:%d" % args.device_id)
        backend = "hccl"
    else:
        state["dev"] = torch.device("cpu")
        backend = "gloo"
    dist.init_process_group(backend, rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]),
                            timeout=datetime.timedelta(seconds=args.op_timeout))
    return "%s group of %d joined" % (backend, dist.get_world_size()), {"backend": backend}


def do_sizes(args):
    torch, dist, dev = state["torch"], state["dist"], state["dev"]
    n = dist.get_world_size()
    rank = dist.get_rank()
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        emit("start", size=size)
        count = max(1, size // 4)  # float32 elements
        check = torch.full((count,), float(rank + 1), dtype=torch.float32, device=dev)
        dist.all_reduce(check)
        synchronize(torch, args.device)
        want = n * (n + 1) / 2.0
        wrong = int((check != want).sum().item())
        buf = torch.zeros(count, dtype=torch.float32, device=dev)  # zeros stay zeros: no overflow
        for _ in range(args.warmup):
            dist.all_reduce(buf)
        synchronize(torch, args.device)
        start = time.monotonic()
        for _ in range(args.iters):
            dist.all_reduce(buf)
        synchronize(torch, args.device)
        seconds = (time.monotonic() - start) / args.iters
        emit("size", size=count * 4, seconds=seconds, wrong=wrong, expected=want,
             got=float(check[0].item()) if wrong else want)
        results.append(count * 4)
        if wrong:
            raise AssertionError("all_reduce(sum) of %d bytes gave %g, expected %g in %d of %d elements"
                                 % (count * 4, float(check[0].item()), want, wrong, count))
    dist.barrier()
    dist.destroy_process_group()
    return "%d sizes done" % len(results), {"sizes": results}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="npu", choices=("npu", "cpu"))
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--sizes", required=True, help="comma-separated byte counts")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--op-timeout", type=float, default=60.0)
    args = parser.parse_args()
    emit("hello", stage="collective", rank=int(os.environ.get("RANK", "0")), pid=os.getpid())
    step("import", do_import, args.device)
    step("init", do_init, args)
    step("all_reduce", do_sizes, args)


if __name__ == "__main__":
    main()
