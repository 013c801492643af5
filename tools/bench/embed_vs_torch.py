#!/usr/bin/env python3
"""`sbp embed` (all-MiniLM-L6-v2 on our CPU kernels) against
sentence-transformers on torch CPU, in one run, interleaved.

A benchmark, never a test (no test may import torch). For each round and
each placement (default: 1 rank, and 4 rank threads on a [2,2] mesh) it runs
our `sbp embed --repeat=R` and then sentence-transformers with
torch.set_num_threads(ranks), each in its own process, on the same 64
sentences of mixed length, as ONE batch of 64 padded to its longest text
(sentence-transformers' encode(batch_size=64) sorts by length and pads each
batch to its longest, so both pad the same way). Both sides load the model
first and time only the runs after it (tokenization, forward pass, pooling,
normalisation); the first of torch's runs is a warm-up and not counted.

Reported per side: wall seconds per run (min / median over every run of
every round), CPU seconds per run (the whole process: every thread; the
steadier number on a loaded machine), texts/s and real tokens/s from the
minimum wall time, and ours/torch time ratios. Writes down `uptime` before
and after. Also checks that both sides give the same vectors (max abs
difference).

  python3 tools/bench/embed_vs_torch.py --torch-python=/root/refvenv/bin/python
  python3 tools/bench/embed_vs_torch.py --json   # one JSON object

The model directory comes from tools/fetch_model.sh unless --model names
it; the sbp binary is bazel-bin/cli/sbp unless --sbp names it (build it
first: bazel build //cli:sbp).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# 64 sentences written for this benchmark: 3 to 31 words, mixed topics.
SENTENCES = [
    "The cat sleeps.",
    "Rain fell all night.",
    "She opened the window to let the morning air into the kitchen.",
    "Stock prices rose sharply after the central bank held interest rates steady.",
    "Why is the sky blue?",
    "A quick lunch.",
    "The committee will review every application submitted before the end of the month "
    "and announce the results in early spring.",
    "He repaired the old bicycle with parts from three different shops.",
    "Photosynthesis converts light energy into chemical energy stored in sugars.",
    "Turn left at the second traffic light.",
    "Our train was delayed by forty minutes because of a signal failure near the bridge, "
    "so we missed the connection and had to wait for the next one.",
    "Children played football in the park until it got dark.",
    "The recipe calls for two cups of flour, a pinch of salt and one egg.",
    "Distributed training splits a model across many devices so that each holds only part "
    "of the weights.",
    "I forgot my umbrella.",
    "The museum's new wing displays paintings from the late nineteenth century alongside "
    "sculptures made by local artists.",
    "Please send the report by Friday.",
    "Mountains surround the small village on three sides.",
    "A good night's sleep improves memory, mood and concentration.",
    "The software update fixed a bug that caused the application to crash when users "
    "uploaded large files over slow connections.",
    "Birds migrate south in autumn.",
    "She speaks four languages fluently.",
    "The engine makes a strange noise whenever the car climbs a steep hill, and the "
    "mechanic could not find the cause.",
    "Coffee or tea?",
    "Volcanic eruptions can change the global climate for several years by filling the "
    "upper atmosphere with fine ash and sulfur dioxide.",
    "The library closes at eight on weekdays.",
    "He won the chess tournament without losing a single game.",
    "Ocean currents carry warm water from the tropics toward the poles.",
    "Wash your hands before dinner.",
    "The startup raised twelve million dollars to build batteries that charge in minutes.",
    "After years of negotiation the two countries finally signed a treaty that settled the "
    "dispute over fishing rights in the northern sea.",
    "My phone battery died.",
    "Bees pollinate many of the crops we eat.",
    "The teacher explained fractions with slices of pizza.",
    "A sudden storm forced the sailors back to the harbour.",
    "Good morning!",
    "The court ruled that the contract was void because one of the parties had not been "
    "told about the hidden fees.",
    "Glaciers in the Alps have lost a large share of their ice over the past century.",
    "They painted the fence white.",
    "Learning to play the piano takes patience and daily practice.",
    "The hospital opened a new clinic for children with asthma and other breathing problems "
    "in the eastern district of the city.",
    "Dogs can smell things humans cannot.",
    "The bakery sells fresh bread every morning at six.",
    "Quantum computers use qubits that can be in a superposition of states.",
    "She lost her keys again.",
    "The bridge was closed for repairs after inspectors found cracks in two of its steel "
    "supports.",
    "Jupiter is the largest planet in the solar system.",
    "Several volunteers cleaned the beach on Saturday, collecting more than two hundred "
    "kilograms of plastic waste, fishing nets and broken glass.",
    "Thank you very much.",
    "The orchestra rehearsed the symphony for six weeks before the premiere.",
    "Exercise lowers the risk of heart disease.",
    "The detective noticed that the clock in the hallway had stopped at exactly a quarter "
    "past three.",
    "Snow covered the road.",
    "Farmers in the valley grow apples, pears and cherries on terraces cut into the hillside.",
    "The airline cancelled all flights because of the strike.",
    "How much does this cost?",
    "Researchers trained the network on millions of labelled images and then tested how well "
    "it recognised objects it had never seen before.",
    "The river flooded the lower town twice this year.",
    "He always reads the newspaper with breakfast.",
    "Solar panels on the roof supply most of the building's electricity during the summer "
    "months.",
    "We watched the sunset from the pier.",
    "The novel follows three generations of a family that runs a small hotel on the coast, "
    "through two wars, a fire and the arrival of mass tourism.",
    "Lemons are sour.",
    "The city plans to replace its diesel buses with electric ones by the end of the decade.",
]
assert len(SENTENCES) == 64

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def torch_worker(model, threads, repeat):
    """Runs in the torch python: loads, warms up once, times `repeat` runs."""
    import torch
    import sentence_transformers
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    m = SentenceTransformer(model, device="cpu")
    m.encode(SENTENCES, batch_size=64)  # warm-up, not counted
    wall, cpu = [], []
    vectors = None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        vectors = m.encode(SENTENCES, batch_size=64, normalize_embeddings=False)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    json.dump({"wall": wall, "cpu": cpu, "vectors": vectors.tolist(),
               "torch": torch.__version__,
               "sentence_transformers": sentence_transformers.__version__,
               "threads": torch.get_num_threads()}, sys.stdout)


def run_ours(sbp, model, placement, repeat):
    out = subprocess.run([sbp, "embed", f"--model={model}", f"--placement={placement}",
                          "--format=json", f"--repeat={repeat}"] + SENTENCES,
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    return {"wall": d["run_seconds"], "cpu": d["run_cpu_seconds"], "vectors": d["embeddings"],
            "tokens": sum(len(t) for t in d["tokens"]),
            "padded_tokens": len(d["tokens"]) * max(len(t) for t in d["tokens"])}


def run_torch(python, model, threads, repeat):
    out = subprocess.run([python, os.path.abspath(__file__), "--torch-worker", f"--model={model}",
                          f"--threads={threads}", f"--repeat={repeat}"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def load():
    return open("/proc/loadavg").read().split()[:3]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sbp", default=os.path.join(REPO, "bazel-bin/cli/sbp"))
    ap.add_argument("--model", default=None)
    ap.add_argument("--torch-python", default=sys.executable,
                    help="a python that imports torch and sentence_transformers")
    ap.add_argument("--placements", default="cpu:0;cpu:0-3 [2,2]",
                    help="';'-separated; torch gets as many threads as the placement has ranks")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per process")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        torch_worker(a.model, a.threads, a.repeat)
        return 0
    model = a.model or subprocess.run([os.path.join(REPO, "tools/fetch_model.sh")], check=True,
                                      capture_output=True, text=True).stdout.strip()
    placements = [p.strip() for p in a.placements.split(";") if p.strip()]

    def ranks(p):
        ids = p.split(":", 1)[1].split()[0]
        lo, _, hi = ids.partition("-")
        return int(hi or lo) - int(lo) + 1

    load_before = load()
    results = {p: {"ours": {"wall": [], "cpu": []}, "torch": {"wall": [], "cpu": []}}
               for p in placements}
    info = {}
    for _ in range(a.rounds):
        for p in placements:
            ours = run_ours(a.sbp, model, p, a.repeat)
            theirs = run_torch(a.torch_python, model, ranks(p), a.repeat)
            for side, r in (("ours", ours), ("torch", theirs)):
                results[p][side]["wall"] += r["wall"]
                results[p][side]["cpu"] += r["cpu"]
            diff = max(abs(x - y) for u, v in zip(ours["vectors"], theirs["vectors"])
                       for x, y in zip(u, v))
            results[p]["max_abs_diff"] = max(results[p].get("max_abs_diff", 0.0), diff)
            info = {"tokens": ours["tokens"], "padded_tokens": ours["padded_tokens"],
                    "torch": theirs["torch"],
                    "sentence_transformers": theirs["sentence_transformers"]}
    report = {"texts": len(SENTENCES), "batch_size": 64, "real_tokens": info["tokens"],
              "padded_tokens": info["padded_tokens"], "torch": info["torch"],
              "sentence_transformers": info["sentence_transformers"],
              "rounds": a.rounds, "runs_per_round": a.repeat,
              "load_before": load_before, "load_after": load(), "placements": {}}
    for p in placements:
        row = {"ranks": ranks(p), "max_abs_diff": results[p]["max_abs_diff"]}
        for side in ("ours", "torch"):
            w, c = results[p][side]["wall"], results[p][side]["cpu"]
            row[side] = {"wall_min": min(w), "wall_median": statistics.median(w),
                         "cpu_min": min(c), "cpu_median": statistics.median(c),
                         "texts_per_s": len(SENTENCES) / min(w),
                         "tokens_per_s": info["tokens"] / min(w)}
        row["ratio_wall_median"] = row["ours"]["wall_median"] / row["torch"]["wall_median"]
        row["ratio_cpu_median"] = row["ours"]["cpu_median"] / row["torch"]["cpu_median"]
        report["placements"][p] = row
    if a.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{len(SENTENCES)} texts, one batch of 64, {info['tokens']} real tokens "
          f"({info['padded_tokens']} padded); torch {info['torch']}, sentence-transformers "
          f"{info['sentence_transformers']}; {a.rounds} rounds x {a.repeat} runs; "
          f"load {' '.join(load_before)} -> {' '.join(report['load_after'])}")
    print(f"{'placement':16} {'side':6} {'wall min/med s':>16} {'cpu min/med s':>15} "
          f"{'texts/s':>8} {'tokens/s':>9}")
    for p, row in report["placements"].items():
        for side in ("ours", "torch"):
            r = row[side]
            print(f"{p:16} {side:6} {r['wall_min']:7.3f} /{r['wall_median']:7.3f} "
                  f"{r['cpu_min']:6.3f} /{r['cpu_median']:6.3f} {r['texts_per_s']:8.1f} "
                  f"{r['tokens_per_s']:9.0f}")
        print(f"{p:16} ours/torch time: wall {row['ratio_wall_median']:.2f}x, "
              f"cpu {row['ratio_cpu_median']:.2f}x (medians); max |ours - torch| "
              f"{row['max_abs_diff']:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
