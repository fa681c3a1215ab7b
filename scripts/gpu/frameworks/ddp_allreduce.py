"""Multi-GPU PyTorch workloads for `cusafe run` (scripts/gpu/run-multigpu.sh).

  ddp_allreduce.py ddp [STEPS]     two processes (torch.multiprocessing.spawn), one GPU
                                   each, NCCL: all-reduce, broadcast and all-gather of
                                   tensors of several sizes and dtypes, then DDP training
                                   of a small model for STEPS steps (default 30)
  ddp_allreduce.py single [STEPS]  one process using cuda:0 and cuda:1: tensors moved
                                   between the devices (.to, copy_), torch.cuda.comm
                                   broadcast / reduce_add / scatter / gather, a model
                                   split over the two devices trained for STEPS steps,
                                   and nn.DataParallel over both

Everything is seeded and deterministic (two ranks: every reduced element is a + b).
The output is one line per check, ranks in order (each rank writes its lines to a file,
the parent prints them after the join), so that a run under cusafe can be compared
byte for byte with a plain run. Exit 0 when every self-check passed, 1 otherwise; with
fewer than 2 GPUs it prints "skipped: needs 2 GPUs" and exits 77.
"""
import os
import sys
import tempfile

# Before CUDA starts (the spawned ranks inherit them): cuBLAS's deterministic workspace,
# and no NVLink SHARP (multicast objects; the device tool's KINDS.md asks to leave it off).
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import torch  # noqa: E402

WORLD = 2


def checksum(t):
    """A printable, exact-enough digest of a tensor: float64 sum and sum of squares
    for floating tensors, the exact integer sum otherwise."""
    t = t.detach()
    if t.is_floating_point():
        d = t.double()
        return f"{d.sum().item():.6e}/{(d * d).sum().item():.6e}"
    return str(int(t.long().sum().item()))


def deterministic(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.use_deterministic_algorithms(True, warn_only=True)


def small_model():
    return torch.nn.Sequential(
        torch.nn.Linear(64, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 128),
        torch.nn.Tanh(),
        torch.nn.Linear(128, 10),
    )


# ---------------------------------------------------------------- two processes (DDP)


def rank_main(rank, outdir, steps, port):
    import torch.distributed as dist

    lines = []
    ok = True
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    # device_id: the NCCL communicator is made at once, on this rank's GPU.
    dist.init_process_group(
        "nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD, device_id=dev
    )
    deterministic(1234)

    # All-reduce of rank-dependent tensors: sizes around NCCL's chunking, odd lengths.
    for n, dtype in [
        (1, torch.float32),
        (12345, torch.float32),
        (1 << 20, torch.float32),
        (777777, torch.float16),
        (65537, torch.bfloat16),
        (100003, torch.int64),
        (4099, torch.int32),
    ]:
        base = torch.arange(n, device=dev, dtype=torch.float64)
        # Small integers (at most 176): exact in every dtype here, bfloat16 included.
        x = ((base % 61) * (rank + 1) - 7 * rank).to(dtype)
        want = ((base % 61) * 3 - 7).to(dtype)  # rank 0 + rank 1
        dist.all_reduce(x)
        good = bool(torch.equal(x, want))
        ok &= good
        lines.append(f"all_reduce {str(dtype)[6:]} n={n} {checksum(x)} {'ok' if good else 'WRONG'}")

    # Broadcast from rank 1 and all-gather.
    b = torch.full((50000,), float(rank + 10), device=dev)
    dist.broadcast(b, src=1)
    good = bool((b == 11.0).all())
    ok &= good
    lines.append(f"broadcast {checksum(b)} {'ok' if good else 'WRONG'}")
    g = [torch.empty(3001, device=dev, dtype=torch.int64) for _ in range(WORLD)]
    dist.all_gather(g, torch.arange(3001, device=dev, dtype=torch.int64) * (rank + 1))
    good = all(bool(torch.equal(g[r], torch.arange(3001, device=dev) * (r + 1))) for r in range(WORLD))
    ok &= good
    lines.append(f"all_gather {checksum(torch.cat(g))} {'ok' if good else 'WRONG'}")

    # DDP: the same initial weights on both ranks (seeded), each rank its own data.
    torch.manual_seed(0)
    model = small_model().to(dev)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    gen = torch.Generator(device="cpu").manual_seed(100 + rank)
    data = torch.randn(256, 64, generator=gen).to(dev)
    target = torch.randint(0, 10, (256,), generator=gen).to(dev)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(ddp(data), target)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    params = torch.cat([p.detach().flatten() for p in model.parameters()])
    lines.append(f"ddp steps={steps} loss {loss.item():.6e} params {checksum(params)}")
    # The replicas must agree after training: compare with rank 0's parameters.
    ref = params.clone()
    dist.broadcast(ref, src=0)
    good = bool(torch.equal(ref, params))
    ok &= good
    lines.append(f"ddp replicas equal: {'ok' if good else 'WRONG'}")

    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(outdir, f"rank{rank}.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
        f.write("RESULT " + ("ok" if ok else "WRONG") + "\n")


def run_ddp(steps):
    import torch.multiprocessing as mp

    port = int(os.environ.get("MASTER_PORT", "29517"))
    with tempfile.TemporaryDirectory() as outdir:
        mp.spawn(rank_main, args=(outdir, steps, port), nprocs=WORLD, join=True)
        ok = True
        for r in range(WORLD):
            with open(os.path.join(outdir, f"rank{r}.txt")) as f:
                for line in f.read().splitlines():
                    print(f"rank {r}: {line}")
                    ok &= line != "RESULT WRONG"
    return ok


# ---------------------------------------------------------------- one process, two GPUs


def run_single(steps):
    import torch.cuda.comm as comm

    ok = True
    d0, d1 = torch.device("cuda", 0), torch.device("cuda", 1)
    deterministic(4321)

    def check(name, good, value):
        nonlocal ok
        ok &= bool(good)
        print(f"{name} {value} {'ok' if good else 'WRONG'}")

    # Moves between devices: .to, copy_ into a preallocated tensor, non-blocking copies.
    x0 = torch.arange(1 << 20, device=d0, dtype=torch.float32) % 1013
    x1 = x0.to(d1)
    y1 = torch.empty(1 << 20, device=d1)
    y1.copy_(x0)
    z0 = (x1 * 2).to(d0, non_blocking=True)
    torch.cuda.synchronize(d0)
    torch.cuda.synchronize(d1)
    check("to/copy_", torch.equal(x1, y1) and torch.equal(z0, x0 * 2), checksum(z0))
    odd = torch.randint(0, 1000, (12347,), device=d1, dtype=torch.int64)
    check("odd int64 to cuda:0", torch.equal(odd.to(d0).cpu(), odd.cpu()), checksum(odd))

    # torch.cuda.comm: broadcast, reduce_add, scatter, gather (NCCL in one process).
    src = torch.randn(300001, device=d0)
    bc = comm.broadcast(src, devices=[0, 1])
    check("comm.broadcast", torch.equal(bc[1].to(d0), src), checksum(bc[1]))
    parts = [torch.full((70001,), 1.5, device=d0), torch.full((70001,), 2.25, device=d1)]
    red = comm.reduce_add(parts, destination=1)
    check("comm.reduce_add", bool((red == 3.75).all()), checksum(red))
    big = torch.arange(100003, device=d0, dtype=torch.int64)
    sc = comm.scatter(big, devices=[0, 1])
    ga = comm.gather(sc, destination=0)
    check("comm.scatter/gather", torch.equal(ga, big), checksum(ga))

    # A model split over the two devices (pipeline style), trained for `steps` steps.
    torch.manual_seed(0)
    first = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU()).to(d0)
    second = torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.Tanh(), torch.nn.Linear(128, 10)).to(d1)
    opt = torch.optim.Adam(list(first.parameters()) + list(second.parameters()), lr=1e-3)
    gen = torch.Generator(device="cpu").manual_seed(7)
    data = torch.randn(512, 64, generator=gen).to(d0)
    target = torch.randint(0, 10, (512,), generator=gen).to(d1)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(second(first(data).to(d1)), target)
        loss.backward()
        opt.step()
    torch.cuda.synchronize(d0)
    torch.cuda.synchronize(d1)
    p0 = torch.cat([p.detach().flatten() for p in first.parameters()])
    p1 = torch.cat([p.detach().flatten() for p in second.parameters()])
    print(f"split model steps={steps} loss {loss.item():.6e} params {checksum(p0)} {checksum(p1)}")

    # nn.DataParallel over both devices: replicate, scatter, parallel_apply (threads), gather.
    torch.manual_seed(0)
    model = small_model().to(d0)
    dp = torch.nn.DataParallel(model, device_ids=[0, 1])
    opt = torch.optim.SGD(dp.parameters(), lr=0.05)
    data = torch.randn(256, 64, generator=gen).to(d0)
    target = torch.randint(0, 10, (256,), generator=gen).to(d0)
    for _ in range(max(1, steps // 3)):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(dp(data), target)
        loss.backward()
        opt.step()
    torch.cuda.synchronize(d0)
    params = torch.cat([p.detach().flatten() for p in model.parameters()])
    print(f"DataParallel loss {loss.item():.6e} params {checksum(params)}")
    return ok


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "ddp"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    if mode not in ("ddp", "single"):
        print(f"usage: {sys.argv[0]} ddp|single [STEPS]", file=sys.stderr)
        return 2
    # Count without initialising CUDA in the parent (the ranks are spawned after this).
    n = torch.cuda.device_count()
    if n < WORLD:
        print(f"skipped: needs {WORLD} GPUs, found {n}")
        return 77
    print(f"mode {mode}, torch {torch.__version__.split('+')[0]}, 2 of {n} GPUs")
    ok = run_ddp(steps) if mode == "ddp" else run_single(steps)
    print("RESULT", "ok" if ok else "WRONG")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
