#!/usr/bin/env bash
# The op records (ops/records/*.toml) and what is made from them: docs/OPS.md's
# op tables equal the generator's, and a broken record is an error naming the
# file, the op and the field (exit 1), never a table made from bad data.
#
#   op_tables_test.sh <generate.py> <docs/OPS.md> <record.toml>...
set -u
GEN="${1:?usage: $0 <generate.py> <OPS.md> <records...>}"
DOC="$2"
shift 2
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

python3 "$GEN" --check_docs "$DOC" "$@" || fail "docs/OPS.md's op tables differ from the records"
python3 "$GEN" --cc "$TMP/table.cc" "$@" || fail "the records do not make a table"
grep -q 'r.name = "rms_norm";' "$TMP/table.cc" || fail "the table has no rms_norm"
python3 "$GEN" --backward_inc "$TMP/rules.inc" "$@" || fail "the records do not make the rule table"
grep -qF '{"rms_norm", RmsNormGrad},' "$TMP/rules.inc" || fail "the rule table has no rms_norm"
grep -qF '"gather"' "$TMP/rules.inc" && fail "gather (no rule yet) is in the rule table"

# bad RECORD_TEXT WANTED: the generator refuses it with a message holding WANTED.
bad() {
  printf '%s\n' "$1" >"$TMP/bad.toml"
  if python3 "$GEN" --cc "$TMP/out.cc" "$TMP/bad.toml" 2>"$TMP/err"; then
    fail "accepted: $1"
  elif ! grep -qF -- "$2" "$TMP/err"; then
    fail "for: $1: want '$2' in: $(cat "$TMP/err")"
  fi
}
HEAD='family = "toy"
rules = "ops/toy_ops.cc"'
# A record of an op without a backward rule needs no backward_fn.
NB='backward = "not written yet"'
bad "$HEAD
[[op]]
name = \"toy\"
$NB
backwards = \"rule\"" "bad.toml: op toy: unknown field 'backwards'"
bad "$HEAD
[[op]]
name = \"toy\"
backward = \"maybe\"" 'op toy: backward = "maybe": expected one of rule'
bad "$HEAD
[[op]]
name = \"toy\"
$NB
kernels = [\"tpu\"]" 'op toy: kernels = "tpu": expected one of cpu, cuda'
bad "$HEAD
[[op]]
name = \"toy\"
$NB
[[op]]
name = \"toy\"
$NB" "op toy: already recorded in"
bad "$HEAD
[[op]]
name = \"toy\"
$NB
recipe = { attrs = [\"axis=1\"] }" "op toy: recipe needs inputs"
bad "$HEAD
[[op]]
name = \"toy\"
$NB
[[op.alias]]
name = \"toy2\"
in = [\"jax\"]" "alias 'toy2': in = \"jax\": expected one of oneflow, torch, paddle"
bad "$HEAD
[[op]]
name = \"toy\"
$NB
[[op.alias]]
name = \"toy2\"
in = [\"torch\"]
non_empty = [\"dim\"]" "non_empty names 'dim', which attrs does not rename"
bad "$HEAD
[[op]]
name = \"toy\"" 'op toy: backward = "rule" needs backward_fn'
bad "$HEAD
[[op]]
name = \"toy\"
backward = \"gradient op\"
backward_fn = \"ToyGrad\"" 'op toy: backward = "gradient op" has no rule, so no backward_fn'
bad 'rules = "x"
[[op]]
name = "toy"' 'needs family = "..."'
bad "$HEAD
[[op]]
origin = \"ours\"" "an [[op]] without a name"
bad "$HEAD
[[op]
name = \"toy\"" "not TOML"

# A stale page is caught and named.
sed 's/| rms_norm | oneflow |/| rms_norm | ours |/' "$DOC" >"$TMP/OPS.md"
if python3 "$GEN" --check_docs "$TMP/OPS.md" "$@" 2>"$TMP/err"; then
  fail "a stale op table passed"
else
  grep -q "the op tables differ" "$TMP/err" || fail "stale table message: $(cat "$TMP/err")"
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failed"
  exit 1
fi
echo "op tables: the records make docs/OPS.md's tables; broken records are refused"
