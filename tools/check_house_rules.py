#!/usr/bin/env python3
"""House rules that check themselves (run from the repository root by
.ci/run; exit 1 naming each breach):

  length     no C++ function outside tests over 80 lines
  file       no C++ file outside tests over 600 lines
  idiom      one early-return idiom: OFS_RETURN_IF_ERROR / OFS_ASSIGN_OR_RETURN,
             not a hand-written `if (!x.ok()) return ...`
  example    a header whose comment shows an example says where that
             example is compiled and run ("... runs this example", or an
             example file under docs/examples/)

Two lists stand beside the rules, in tools/house_rules.txt:
  table   data tables allowed to be long, each with the reason (permanent);
  debt    what broke a rule when the check came in, with its size then. A
          debt may shrink and must be struck off once paid (the check says
          so), never grow, and no new breach may join it: the list only
          gets shorter.
`--write_debt` rewrites the debt list from the tree (for a change that pays
some off; the diff shows what went).
"""
import os
import re
import sys

FUNCTION_LIMIT = 80
FILE_LIMIT = 600
RULES_FILE = "tools/house_rules.txt"
SOURCE = re.compile(r"\.(h|cc|cu|cuh)$")
SKIP_DIRS = ("bazel-", ".git", "third_party")
# Tests, fuzzers and the docs' examples are outside these rules.
OUTSIDE = ("tests/", "fuzz/", "docs/examples/")
HAND_WRITTEN_RETURN = re.compile(r"if \(!\s*([\w.\->\[\]()*]+?)\.ok\(\)\)\s*(\{\s*)?return\b")
EXAMPLE = re.compile(r"^//\s*(Example|Usage|e\.g\.)\b", re.M)
EXAMPLE_HOME = re.compile(r"runs? (this|these|the) examples?|docs/examples/|example:\s*\S+\.cc", re.I)


def sources():
    for root, dirs, files in os.walk("."):
        dirs[:] = sorted(d for d in dirs if not d.startswith(SKIP_DIRS) and not d.startswith("."))
        for name in sorted(files):
            if SOURCE.search(name):
                path = os.path.normpath(os.path.join(root, name))
                if not path.startswith(OUTSIDE):
                    yield path


def strip_comments_and_strings(text):
    """The text with comments, string and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


NOT_A_FUNCTION = re.compile(r"\b(if|for|while|switch|catch|return|sizeof|decltype|alignof)\s*$")


def functions(text):
    """(name, first line, line count) of each function body, lambdas and
    bodies nested in classes included (a lambda counts inside its function
    as well: both are limited)."""
    code = strip_comments_and_strings(text)
    found = []
    stack = []  # (is_function, name, start line)
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            before = code[max(0, i - 400):i]
            m = re.search(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?(mutable\s*)?"
                          r"(->\s*[\w:<>,\s*&]+)?\s*(:[^;{}]*)?$", before)
            name = None
            if m:
                head = before[:m.start() + 1]
                depth, k = 0, len(head) - 1
                while k >= 0:  # the '(' that opens the parameter list
                    depth += {")": 1, "(": -1}.get(head[k], 0)
                    if depth == 0:
                        break
                    k -= 1
                callee = re.search(r"([\w:~<>\]\[=]+)\s*$", head[:k]) if k > 0 else None
                if callee and not NOT_A_FUNCTION.search(head[:k]):
                    name = callee.group(1)
                    if name.endswith("]"):
                        name = "lambda"
            stack.append((name, line))
        elif c == "}" and stack:
            name, start = stack.pop()
            if name is not None:
                found.append((name, start, line - start + 1))
    return found


def breaches():
    """{(rule, path, what): size} for the whole tree."""
    out = {}
    for path in sources():
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n")
        if lines > FILE_LIMIT:
            out[("file", path, "")] = lines
        seen = {}
        for name, start, count in functions(text):
            if count > FUNCTION_LIMIT:
                key = name if name not in seen else f"{name}#{seen[name] + 1}"
                seen[name] = seen.get(name, 0) + 1
                out[("length", path, key)] = count
        idioms = len(HAND_WRITTEN_RETURN.findall(strip_comments_and_strings_keep_code(text)))
        if idioms:
            out[("idiom", path, "")] = idioms
        if path.endswith((".h", ".cuh")) and EXAMPLE.search(text) and not EXAMPLE_HOME.search(text):
            out[("example", path, "")] = 1
    return out


def strip_comments_and_strings_keep_code(text):
    # The idiom is code; its operand may hold a string, so blank only comments.
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def read_rules():
    tables, debts = {}, {}
    if not os.path.exists(RULES_FILE):
        return tables, debts
    with open(RULES_FILE) as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if parts[0] == "table" and len(parts) >= 4:
                tables[(parts[1], parts[2], parts[3] if parts[3] != "-" else "")] = " ".join(parts[4:])
            elif parts[0] == "debt" and len(parts) == 5:
                debts[(parts[1], parts[2], parts[3] if parts[3] != "-" else "")] = int(parts[4])
            else:
                sys.exit(f"{RULES_FILE}:{n}: expected 'table RULE PATH NAME REASON...' or "
                         f"'debt RULE PATH NAME SIZE', got {raw.strip()!r}")
    return tables, debts


def write_debt(found, tables):
    with open(RULES_FILE) as f:
        keep = [l for l in f if not l.startswith("debt ")]
    body = "".join(keep).rstrip("\n") + "\n"
    for (rule, path, what), size in sorted(found.items()):
        if (rule, path, what) not in tables:
            body += f"debt {rule} {path} {what or '-'} {size}\n"
    with open(RULES_FILE, "w") as f:
        f.write(body)


def main(argv):
    found = breaches()
    tables, debts = read_rules()
    if "--write_debt" in argv:
        write_debt(found, tables)
        print(f"house rules: {sum(1 for k in found if k not in tables)} debts written to {RULES_FILE}")
        return 0
    problems = []
    limits = {"length": f"over {FUNCTION_LIMIT} lines", "file": f"over {FILE_LIMIT} lines",
              "idiom": "hand-written `if (!x.ok()) return`", "example": "an example nothing compiles"}
    for key, size in sorted(found.items()):
        rule, path, what = key
        label = f"{path}{': ' + what if what else ''}"
        if key in tables:
            continue
        if key not in debts:
            problems.append(f"{rule}: {label}: {limits[rule]} ({size}); new breaches are not allowed")
        elif size > debts[key]:
            problems.append(f"{rule}: {label}: grew from {debts[key]} to {size}; debts only shrink")
    for key, size in sorted(debts.items()):
        if key not in found:
            rule, path, what = key
            problems.append(f"{rule}: {path}{': ' + what if what else ''}: paid off; strike "
                            f"its debt line from {RULES_FILE} (or run --write_debt)")
    for p in problems:
        print(p)
    total = {r: sum(1 for k in debts if k[0] == r) for r in limits}
    print(f"house rules: {len(problems)} problems; debts left: " +
          ", ".join(f"{total[r]} {r}" for r in limits) +
          f"; {len(tables)} tables allowed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
