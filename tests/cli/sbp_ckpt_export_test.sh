#!/usr/bin/env bash
# `sbp ckpt export` checked by a reader that is not ours: the demo saves a
# checkpoint from cpu:0-3 [2,2] (36 tensors in pieces over 2 shard files),
# `sbp ckpt export` writes one .safetensors file, and plain numpy parsing
# of the format (the 8-byte length, the JSON header, the data region)
# reads it back. Every tensor equals the one assembled, also by numpy,
# from the pieces that index.json lists in the shard files, bit for bit;
# the metadata is the checkpoint's; the summary line counts what the file
# holds. A wrong word count is exit 2, a missing checkpoint exit 1.
#
#   sbp_ckpt_export_test.sh <path to sbp>
set -u
if (($# != 1)) || [[ ! -x "$1" ]]; then
  echo "FAIL: usage: $0 <path to an executable sbp> (got: $*)"
  exit 1
fi
exec python3 - "$1" <<'PY'
import json, os, struct, subprocess, sys
import numpy as np

SBP = sys.argv[1]
TMP = os.environ.get("TEST_TMPDIR") or "/tmp"
ckpt, out = os.path.join(TMP, "ckpt"), os.path.join(TMP, "whole.safetensors")
failures = []

def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)

def run(*args):
    p = subprocess.run([SBP, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
          "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}

def read_safetensors(path):
    """The format by hand: {name: array}, metadata."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    meta = header.pop("__metadata__", {})
    arrays = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        assert 0 <= begin <= end <= len(data), (path, name, begin, end, len(data))
        arrays[name] = np.frombuffer(data[begin:end], dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
    return arrays, meta

rc, _, err = run("demo", "--steps=2", f"--save={ckpt}")
if rc != 0:
    print(f"FAIL: setup: demo --save: exit {rc}: {err}")
    sys.exit(1)

rc, stdout, err = run("ckpt", "export", ckpt, out)
check(rc == 0 and err == "", f"export: exit {rc}, stderr {err!r}")
whole, meta = read_safetensors(out)

# The same tensors assembled from the checkpoint's own pieces.
with open(os.path.join(ckpt, "index.json")) as f:
    index = json.load(f)
shards = {}
expected = {}
for name, t in index["tensors"].items():
    full = None
    for p in t["pieces"]:
        if p["file"] not in shards:
            shards[p["file"]] = read_safetensors(os.path.join(ckpt, p["file"]))[0]
        piece = shards[p["file"]][p["key"]]
        if full is None:
            full = np.zeros(t["shape"], dtype=piece.dtype)
        full[tuple(slice(b, e) for b, e in p["region"])] = piece
    expected[name] = full

check(len(expected) == 36, f"the demo's checkpoint has {len(expected)} tensors, want 36")
check(sorted(whole) == sorted(expected), f"exported names {sorted(whole)} != {sorted(expected)}")
for name, want in expected.items():
    got = whole.get(name)
    if got is None:
        continue
    check(got.dtype == want.dtype and got.shape == want.shape,
          f"{name}: {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}")
    check(got.tobytes() == want.tobytes(), f"{name}: values differ from its pieces")
    check(list(got.shape) == index["tensors"][name]["shape"], f"{name}: shape differs from the index")
check(meta == index["metadata"], f"metadata {meta} != the checkpoint's {index['metadata']}")
check(meta.get("step") == "2", f"metadata step {meta.get('step')!r}, want '2'")
# Not all zeros: the weights and the Adam moments after 2 steps.
check(all(np.any(a != 0) for n, a in whole.items() if not n.startswith("adam.")),
      "a weight is all zeros")
nbytes = sum(a.nbytes for a in whole.values())
check(stdout == f"wrote {out}: {len(whole)} tensors, {nbytes} bytes\n", f"export: stdout {stdout!r}")

rc, _, err = run("ckpt", "export", ckpt)
check(rc == 2, f"export without OUT: exit {rc}, want 2 ({err!r})")
missing = os.path.join(TMP, "no-such-ckpt")
rc, _, err = run("ckpt", "export", missing, out)
check(rc == 1 and missing in err, f"export of a missing checkpoint: exit {rc}, stderr {err!r}")

print(f"{len(whole)} tensors, {nbytes} bytes; {len(failures)} failures")
sys.exit(1 if failures else 0)
PY
