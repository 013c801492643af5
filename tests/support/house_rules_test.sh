#!/usr/bin/env bash
# tools/check_house_rules.py on a tree made here: a breach fails naming the
# file, the function and the rule; a listed debt passes until it grows or is
# paid; a table is allowed; the real tree passes with its list.
#
#   house_rules_test.sh <check_house_rules.py>
set -u
CHECK="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
TMP="${TEST_TMPDIR:-$(mktemp -d)}/tree"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

rm -rf "$TMP"
mkdir -p "$TMP/lib" "$TMP/tools" "$TMP/tests"
long_function() {  # long_function NAME LINES
  echo "int $1(int x) {"
  for ((i = 0; i < $2; ++i)); do echo "  x += $i;  // a { brace in a comment"; done
  echo '  const char* s = "} not a brace";'
  echo "  return x;"
  echo "}"
}
long_function Short 10 >"$TMP/lib/a.cc"
long_function TooLong 90 >>"$TMP/lib/a.cc"
cat >>"$TMP/lib/a.cc" <<'CC'
absl::Status Twice(absl::Status s) {
  if (!s.ok()) return s;
  OFS_RETURN_IF_ERROR(s);
  return s;
}
CC
long_function InATest 200 >"$TMP/tests/t.cc"  # tests are outside the rules
printf '// Example:\n//   Frob(1);\nint Frob(int);\n' >"$TMP/lib/frob.h"
printf '# rules\n' >"$TMP/tools/house_rules.txt"

run() { (cd "$TMP" && python3 "$CHECK" "$@") >"$TMP.out" 2>&1; }
expect() {  # expect RC TEXT: the last run's exit code and a line of its output
  [[ "$rc" == "$1" ]] || fail "exit $rc, want $1: $(cat "$TMP.out")"
  grep -qF -- "$2" "$TMP.out" || fail "want '$2' in: $(cat "$TMP.out")"
}

run; rc=$?
expect 1 "length: lib/a.cc: TooLong: over 80 lines (94); new breaches are not allowed"
expect 1 "idiom: lib/a.cc: hand-written \`if (!x.ok()) return\` (1)"
expect 1 "example: lib/frob.h: an example nothing compiles"
grep -q "Short\|InATest" "$TMP.out" && fail "a short function or a test was reported"

run --write_debt; rc=$?
expect 0 "3 debts written"
run; rc=$?
expect 0 "house rules: 0 problems; debts left: 1 length, 0 file, 1 idiom, 1 example"

long_function TooLong 91 >"$TMP/lib/b.cc"  # the same name elsewhere is a new breach
sed -i 's/x += 5;/x += 5; x += 6;\n  x += 7;/' "$TMP/lib/a.cc"
run; rc=$?
expect 1 "length: lib/b.cc: TooLong: over 80 lines (95); new breaches are not allowed"
expect 1 "length: lib/a.cc: TooLong: grew from 94 to 95; debts only shrink"
rm "$TMP/lib/b.cc" "$TMP/lib/frob.h"
long_function TooLong 10 >"$TMP/lib/a.cc"
run; rc=$?
expect 1 "length: lib/a.cc: TooLong: paid off; strike its debt line"
expect 1 "example: lib/frob.h: paid off"

sed -i '/^debt /d' "$TMP/tools/house_rules.txt"
long_function Kernels 120 >"$TMP/lib/a.cc"
echo "table length lib/a.cc Kernels one entry per kernel, nothing to split" >>"$TMP/tools/house_rules.txt"
run; rc=$?
expect 0 "house rules: 0 problems; debts left: 0 length, 0 file, 0 idiom, 0 example; 1 tables allowed"
echo "debt length lib/a.cc" >>"$TMP/tools/house_rules.txt"
run; rc=$?
[[ "$rc" != 0 ]] || fail "a malformed rules line passed"

if [[ $failures -gt 0 ]]; then
  echo "$failures failed"
  exit 1
fi
echo "house rules: breaches named, debts ratchet, tables allowed"
