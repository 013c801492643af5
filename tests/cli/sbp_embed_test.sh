#!/usr/bin/env bash
# `sbp embed` as a command: the built binary on the committed tiny BERT
# (tests/data/tiny_bert, hidden size 32; reference vectors from
# transformers + sentence-transformers in its reference.json).
#   --format=json: the keys model, dim, placement, tokens, embeddings; the
#     default placement cpu:0-3 [2,2]; token ids equal to the reference;
#     unit vectors within 1e-4 of the reference.
#   text: one line per text and the cosine-similarity table, whose values
#     are the reference vectors' cosines (to the 3 printed decimals).
#   a bad --placement or a missing model: exit 1, one line on stderr
#     naming it, nothing on stdout.
#
#   sbp_embed_test.sh <path to sbp> <tiny BERT model directory>
set -u
if (($# != 2)) || [[ ! -x "$1" ]] || [[ ! -f "$2/config.json" ]]; then
  echo "FAIL: usage: $0 <path to an executable sbp> <model dir> (got: $*)"
  exit 1
fi
exec python3 - "$1" "$2" <<'PY'
import json, math, os, subprocess, sys

SBP, MODEL = sys.argv[1], sys.argv[2]
with open(os.path.join(MODEL, "reference.json")) as f:
    ref = json.load(f)
with open(os.path.join(MODEL, "config.json")) as f:
    hidden = json.load(f)["hidden_size"]
# Three reference sentences: ASCII, punctuation, and accents (WordPiece's
# accent stripping).
picks = [0, 7, 8]
texts = [ref["sentences"][i] for i in picks]
failures = []

def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)

def run(*args):
    p = subprocess.run([SBP, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

# --- json, default placement ---------------------------------------------
rc, out, err = run("embed", f"--model={MODEL}", "--format=json", *texts)
check(rc == 0, f"json: exit {rc}: {err}")
doc = json.loads(out) if rc == 0 else {}
for key in ("model", "dim", "placement", "tokens", "embeddings"):
    check(key in doc, f"json: no key {key!r} in {sorted(doc)}")
check(doc.get("model") == MODEL, f"json: model {doc.get('model')!r}, want {MODEL!r}")
check(doc.get("dim") == hidden, f"json: dim {doc.get('dim')}, want {hidden}")
check(doc.get("placement") == "cpu:0-3 [2,2]",
      f"json: default placement {doc.get('placement')!r}, want 'cpu:0-3 [2,2]'")
check(doc.get("texts") == texts, f"json: texts {doc.get('texts')!r}")
tokens = doc.get("tokens", [])
embeddings = doc.get("embeddings", [])
check(len(tokens) == len(texts) and len(embeddings) == len(texts),
      f"json: {len(tokens)} token lists and {len(embeddings)} vectors for {len(texts)} texts")
for k, i in enumerate(picks[:len(embeddings)]):
    check(tokens[k] == ref["token_ids"][i], f"json: text {k}: tokens {tokens[k]} != {ref['token_ids'][i]}")
    v = embeddings[k]
    check(len(v) == hidden, f"json: text {k}: {len(v)} values, want {hidden}")
    norm = math.sqrt(sum(x * x for x in v))
    check(abs(norm - 1) < 1e-5, f"json: text {k}: norm {norm}, want 1")
    worst = max(abs(x - y) for x, y in zip(v, ref["embeddings"][i]))
    check(worst < 1e-4, f"json: text {k}: {worst:.3g} from the reference (tolerance 1e-4)")

# --- text: the cosine-similarity table ------------------------------------
rc, out, err = run("embed", f"--model={MODEL}", *texts)
check(rc == 0, f"text: exit {rc}: {err}")
lines = out.splitlines()
check(bool(lines) and "hidden 32" in lines[0] and "on cpu:0-3 [2,2]: 3 texts" in lines[0],
      f"text: first line {lines[:1]}")
for k, t in enumerate(texts):
    line = f"[{k}] {json.dumps(t, ensure_ascii=False)} ({len(ref['token_ids'][picks[k]])} tokens)"
    check(line in lines, f"text: no line {line!r}")
if "cosine similarity:" not in lines:
    check(False, "text: no 'cosine similarity:' table")
else:
    at = lines.index("cosine similarity:")
    header, rows = lines[at + 1], lines[at + 2:at + 2 + len(texts)]
    check(header.split() == [f"[{j}]" for j in range(len(texts))], f"text: table header {header!r}")
    check(len(rows) == len(texts), f"text: {len(rows)} table rows, want {len(texts)}")
    for i, row in enumerate(rows):
        cells = row.split()
        check(cells[:1] == [f"[{i}]"] and len(cells) == len(texts) + 1, f"text: row {row!r}")
        for j, cell in enumerate(cells[1:]):
            want = cosine(ref["embeddings"][picks[i]], ref["embeddings"][picks[j]])
            check(abs(float(cell) - want) <= 0.0015,
                  f"text: cosine [{i}][{j}] printed {cell}, the reference's is {want:.4f}")

# --- failures: exit 1, one line naming the bad value -----------------------
for args, needle, what in [
    ([f"--model={MODEL}", "--placement=cpu:0-3 [3,2]", "x"], "[3,2]", "bad --placement"),
    ([f"--model={MODEL}", "--placement=cuda:0-1", "x"], "--placement='cuda:0-1'", "not a cpu placement"),
    (["--model=/nonexistent/tiny_bert", "x"], "/nonexistent/tiny_bert", "missing model"),
]:
    rc, out, err = run("embed", *args)
    check(rc == 1, f"{what}: exit {rc}, want 1 (stderr: {err!r})")
    check(err.startswith("sbp embed:") and len(err.splitlines()) == 1,
          f"{what}: stderr is not one 'sbp embed:' line: {err!r}")
    check(needle in err, f"{what}: stderr does not name {needle!r}: {err!r}")
    check(out == "", f"{what}: stdout not empty: {out!r}")

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
PY
