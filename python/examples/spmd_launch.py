#!/usr/bin/env python3
"""The same script on every rank: run it with the launcher.

    sbp launch --nproc=4 -- python3 spmd_launch.py

Each process joins the Gloo world the launcher describes (``ofs.init()``),
holds its own shards, and runs the same ops; boxing crosses processes.
``--fail_rank=K`` makes rank K exit with code 7 while the others wait
outside any collective, so that only the launcher can end them: it names
rank K and its exit code and terminates the others. ``--slow_rank=K`` makes
rank K arrive --late seconds (default 3) late at a collective, so the
others' calls end with TimeoutError after --timeout."""
import argparse
import time

import numpy as np

import oneflow_sbp as ofs
from oneflow_sbp import sbp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fail_rank", type=int, default=-1)
    ap.add_argument("--slow_rank", type=int, default=-1)
    ap.add_argument("--late", type=float, default=3)
    ap.add_argument("--timeout", type=float, default=30)
    a = ap.parse_args()
    ofs.init(timeout=a.timeout)
    rank, n = ofs.rank(), ofs.world_size()
    p = ofs.placement("cpu", ranks=[[0, 1], [2, 3]])
    a_full = np.arange(48, dtype=np.float32).reshape(8, 6) / 10 - 2
    w_full = np.arange(24, dtype=np.float32).reshape(6, 4) / 10 - 1
    # A full array on every process, or each process's own shard.
    x = ofs.tensor(a_full, placement=p, sbp=[sbp.split(0), sbp.broadcast])
    w_local = w_full[:, (rank % 2) * 2:(rank % 2) * 2 + 2]
    w = ofs.tensor(w_local, placement=p, sbp=[sbp.broadcast, sbp.split(1)], local=True,
                   requires_grad=True)
    assert w.shape == (6, 4), w.shape
    if a.fail_rank >= 0:
        if rank == a.fail_rank:
            print(f"rank {rank}: failing on purpose at {time.time():.3f}", flush=True)
            raise SystemExit(7)
        time.sleep(60)  # no collective: nothing but the launcher ends this wait early
        print(f"rank {rank}: was not stopped", flush=True)
        return
    if a.slow_rank >= 0:
        if rank == a.slow_rank:
            time.sleep(a.late)
            return
        try:
            x.to_global(sbp=[sbp.broadcast, sbp.broadcast])  # an all-gather the slow rank misses
        except TimeoutError as e:
            print(f"rank {rank}: TimeoutError: {e}", flush=True)
        return
    y = ofs.relu(ofs.matmul(x, w))
    loss = ofs.sum(y)
    loss.backward()
    expect_grad = a_full.T @ (a_full @ w_full > 0).astype(np.float32)
    ok = (np.allclose(y.numpy(), np.maximum(a_full @ w_full, 0), atol=1e-5)
          and np.allclose(w.grad.numpy(), expect_grad, atol=1e-4))
    print(f"rank {rank}/{n}: y {y.sbp} loss {loss.item():.4f} local {w.grad.to_local().shape} "
          f"{'ok' if ok else 'MISMATCH'}", flush=True)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
