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

# refused MODE RECORD_TEXT WANTED: generate.py MODE refuses the record with a
# message holding WANTED.
refused() {
  printf '%s\n' "$2" >"$TMP/bad.toml"
  # shellcheck disable=SC2086 # MODE is a flag and its value
  if python3 "$GEN" $1 "$TMP/bad.toml" 2>"$TMP/err"; then
    fail "accepted by $1: $2"
  elif ! grep -qF -- "$3" "$TMP/err"; then
    fail "for $1: $2: want '$3' in: $(cat "$TMP/err")"
  fi
}
# The built-in table (--cc) refuses it.
bad() { refused "--cc $TMP/out.cc" "$1" "$2"; }
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

# A family that defines its ops (op_family()): each missing piece is named.
bad_family() { refused "--family $TMP/fam" "$1" "$2"; }
FHEAD="$HEAD
impl = \"toy.h\"
namespace = \"toy\""
DEF='inputs = ["x"]
outputs = ["y"]
kernels = ["cpu"]'
# An op that defines all but its rule.
RULELESS="[[op]]
name = \"toy\"
$NB
$DEF
cpu_fn = \"ToyKernel\""
bad_family "$FHEAD
[[op]]
name = \"toy\"
$NB
$DEF
rule = \"einsum ij->ij\"" "op toy: kernels lists cpu, so it needs cpu_fn, its kernel"
bad_family "$FHEAD
$RULELESS" "op toy: defines its op, so it needs its rule"
bad_family "$FHEAD
$RULELESS
rule = \"elementwise\"" 'op toy: rule = "elementwise": expected "einsum <spec>"'
bad_family "$FHEAD
$RULELESS
rule = \"einsum ij->ij\"
shape_fn = \"Same\"" "rule gives the shape function and the SBP rule"
bad_family "$HEAD
$RULELESS
rule = \"einsum ij->ij\"" 'needs impl = "<header of its functions>"'
bad_family "$HEAD
impl = { rules = \"r.h\", kernels = \"k.h\" }
namespace = \"toy\"
$RULELESS
rule = \"einsum ij->ij\"" "or one header per layer"
bad_family "$FHEAD
[[op]]
name = \"toy\"
$NB" "op_family() builds families whose every record defines its op; not defining: toy"
# The built-in table refuses a record that defines its op (it would be
# registered nowhere).
bad "$FHEAD
$RULELESS
rule = \"einsum ij->ij\"" "built by op_family() in ops/op_family.bzl"
# A good family makes each layer's header and .cc, and the header of all three.
printf '%s\n' "$FHEAD
[[op]]
name = \"toy\"
$DEF
cpu_fn = \"ToyKernel\"
rule = \"einsum ij->ij\"
backward_fn = \"ToyGrad\"" >"$TMP/good.toml"
if python3 "$GEN" --family "$TMP/good" --include tests/good "$TMP/good.toml"; then
  grep -qF '#include "tests/good_rules_registration.h"' "$TMP/good_rules_registration.cc" ||
    fail "the rules .cc does not include its header by the --include path"
  grep -qF 'EinsumOp("toy", "ij->ij", {"x"}, "y")' "$TMP/good_rules_registration.cc" || fail "no einsum rule made"
  grep -qF 'registry.Register("toy", ::oneflow_sbp::DeviceType::kCpu, ToyKernel)' "$TMP/good_kernels_registration.cc" ||
    fail "no kernel registration made"
  grep -qF 'RegisterBackward("toy", ToyGrad)' "$TMP/good_backward_registration.cc" || fail "no backward made"
  grep -qF 'absl::Status RegisterToyRules' "$TMP/good_rules_registration.h" || fail "no rules header made"
  grep -qF '_rules_registration.h"' "$TMP/good_family.h" || fail "the family header lacks the rules header"
  # The rules layer's files name no kernel or autograd header.
  grep -E 'eager/|kernels/' "$TMP/good_rules_registration.cc" "$TMP/good_rules_registration.h" &&
    fail "the rules layer includes a kernel or autograd header"
else
  fail "a good family was refused"
fi

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
