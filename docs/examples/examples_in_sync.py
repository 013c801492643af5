"""Checks that every C++ example in the documentation is a program we build.

Each ```cpp block of a Markdown file must follow a line
`<!-- example: docs/examples/NAME.cc -->`, and each header example must
start with a comment line `// Example (docs/examples/NAME.cc ...`; the
block (or the comment lines after it, without their `//   `) must equal,
line for line after removing the common indentation, the lines between
`// [example]` and `// [end example]` in that file. The example files are
cc_test targets (docs/examples/BUILD), so an example that no longer
compiles or runs fails its own target, and one whose text drifted from the
program fails here.

Usage: examples_in_sync.py ROOT FILE...   (FILE: .md files and headers,
relative to ROOT). --self-test also checks that a drifted, an unmarked and
an unknown example are each reported.
"""
import os
import re
import sys
import textwrap

MARKER_MD = re.compile(r"<!--\s*example:\s*(\S+)\s*-->")
MARKER_H = re.compile(r"^//\s*Example \((docs/examples/[\w.]+)")


def dedent(lines):
    return textwrap.dedent("\n".join(lines)).strip("\n").split("\n")


def example_region(root, path, errors, where):
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        errors.append(f"{where}: example file {path} does not exist")
        return None
    lines = open(full, encoding="utf-8").read().split("\n")
    starts = [i for i, l in enumerate(lines) if l.strip() == "// [example]"]
    ends = [i for i, l in enumerate(lines) if l.strip() == "// [end example]"]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        errors.append(f"{path}: needs exactly one // [example] ... // [end example] region")
        return None
    return dedent(lines[starts[0] + 1:ends[0]])


def compare(shown, region, where, path, errors):
    if shown == region:
        return
    for i in range(max(len(shown), len(region))):
        a = shown[i] if i < len(shown) else "<missing>"
        b = region[i] if i < len(region) else "<missing>"
        if a != b:
            errors.append(f"{where}: differs from {path} at example line {i + 1}:\n"
                          f"  shown:   {a}\n  program: {b}")
            return


def check_markdown(root, path, text, errors, used):
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```cpp":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            m = MARKER_MD.search(lines[k]) if k >= 0 else None
            where = f"{path}:{i + 1}"
            if not m:
                errors.append(f"{where}: a C++ block with no <!-- example: FILE --> line before "
                              "it (every C++ example must be a program that a test builds)")
            else:
                used.add(m.group(1))
                region = example_region(root, m.group(1), errors, where)
                if region is not None:
                    compare(dedent(lines[i + 1:j]), region, where, m.group(1), errors)
            i = j
        i += 1


def check_header(root, path, text, errors, used):
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = MARKER_H.match(line)
        if not m:
            continue
        # The marker may wrap onto following comment lines up to the colon.
        j = i
        while not lines[j].rstrip().endswith(":"):
            j += 1
        shown = []
        for line2 in lines[j + 1:]:
            if not line2.startswith("//   "):
                break
            shown.append(line2[5:])
        used.add(m.group(1))
        region = example_region(root, m.group(1), errors, f"{path}:{i + 1}")
        if region is not None:
            compare(dedent(shown), region, f"{path}:{i + 1}", m.group(1), errors)


def check(root, files, texts=None):
    errors, used = [], set()
    for path in files:
        text = (texts or {}).get(path)
        if text is None:
            text = open(os.path.join(root, path), encoding="utf-8").read()
        if path.endswith(".md"):
            check_markdown(root, path, text, errors, used)
        else:
            check_header(root, path, text, errors, used)
    examples = sorted(f for f in os.listdir(os.path.join(root, "docs/examples"))
                      if f.endswith(".cc"))
    for f in examples:
        if f"docs/examples/{f}" not in used:
            errors.append(f"docs/examples/{f}: shown by no document or header")
    return errors


def self_test(root, files):
    """The checker must catch a drifted, an unmarked and an unknown example."""
    md = next(f for f in files if f.endswith(".md") and "```cpp" in open(
        os.path.join(root, f), encoding="utf-8").read())
    text = open(os.path.join(root, md), encoding="utf-8").read()
    start = text.index("```cpp\n") + len("```cpp\n")
    cases = {
        "drifted": text[:start] + "int drifted = 0;\n" + text[start:],
        "unmarked": re.sub(r"<!--\s*example:[^>]*-->", "", text),
        "unknown file": re.sub(r"(<!--\s*example:\s*)\S+", r"\1docs/examples/no_such.cc", text,
                               count=1),
    }
    bad = []
    for name, mutated in cases.items():
        if not check(root, files, {md: mutated}):
            bad.append(name)
    return bad


def main(argv):
    args = [a for a in argv[1:] if a != "--self-test"]
    root, files = args[0], args[1:]
    errors = check(root, files)
    for e in errors:
        print("FAIL:", e)
    if "--self-test" in argv:
        missed = self_test(root, files)
        for name in missed:
            print(f"FAIL: self-test: a {name} example was not reported")
        errors += missed
    print(f"{len(files)} files checked, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
