#!/usr/bin/env python3
"""Checks that every target declares the targets whose headers it includes
(a header reached only through another dependency breaks when that
dependency changes). Run from the repository root; exit 1 naming each
missing dependency as "<target> includes <header>: add <provider>".

BUILD files are read as text: rules with a name and srcs/hdrs/deps lists of
string labels (select() branches count, list variables defined in the same
file are expanded). Headers that no rule provides are not checked.
"""
import os
import re
import sys

RULE = re.compile(r'^(\w+)\(\n(.*?)^\)', re.M | re.S)
LIST_VAR = re.compile(r'^(\w+) = \[(.*?)\]', re.M | re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
KINDS = {'cc_library', 'cc_binary', 'cc_test', 'cuda_library', 'area_test'}


def strings(text):
    return re.findall(r'"([^"]*)"', text)


def attr(body, name, variables):
    m = re.search(r'^    %s = (.*?)(?=^    \w+ = |\Z)' % name, body, re.M | re.S)
    if not m:
        return []
    value = m.group(1)
    out = strings(value)
    for var in re.findall(r'\b([A-Z_][A-Z0-9_]+)\b', value):
        out += variables.get(var, [])
    return out


def label(pkg, text):
    if text.startswith(':'):
        return f"//{pkg}:{text[1:]}"
    if text.startswith('//'):
        return text if ':' in text else f"{text}:{text.rsplit('/', 1)[-1]}"
    return f"//{pkg}:{text}"


def file_of(pkg, text):
    """A srcs/hdrs entry as a repository path (labels of files included)."""
    if text.startswith('//'):
        p, _, f = text[2:].partition(':')
        return f"{p}/{f}" if p else f
    return f"{pkg}/{text}" if pkg else text


def main():
    targets = {}  # label -> (files, deps)
    provides = {}  # header path -> set of labels
    for root, dirs, files in os.walk('.'):
        dirs[:] = [d for d in dirs if not d.startswith(('bazel-', '.'))]
        for b in ('BUILD', 'BUILD.bazel'):
            if b not in files:
                continue
            pkg = os.path.normpath(root)[0:] if root != '.' else ''
            pkg = '' if pkg == '.' else pkg
            text = open(os.path.join(root, b)).read()
            # List constants of the BUILD file and of the .bzl files it loads.
            variables = {}
            for bzl_pkg, bzl in re.findall(r'^load\("//([\w/]*):([\w.]+)"', text, re.M):
                path = os.path.join(bzl_pkg, bzl)
                if os.path.isfile(path):
                    variables.update({m.group(1): strings(m.group(2))
                                      for m in LIST_VAR.finditer(open(path).read())})
            variables.update({m.group(1): strings(m.group(2)) for m in LIST_VAR.finditer(text)})
            for m in RULE.finditer(text):
                if m.group(1) not in KINDS:
                    continue  # macros add dependencies of their own
                body = m.group(2)
                nm = re.search(r'^    name = "([^"]+)"', body, re.M)
                if not nm:
                    continue
                lab = f"//{pkg}:{nm.group(1)}"
                own = [file_of(pkg, f) for f in attr(body, 'srcs', variables) +
                       attr(body, 'hdrs', variables)]
                deps = {label(pkg, d) for d in attr(body, 'deps', variables)}
                targets[lab] = (own, deps)
                for f in own:
                    if f.endswith(('.h', '.cuh')):
                        provides.setdefault(f, set()).add(lab)
    problems = []
    for lab, (own, deps) in sorted(targets.items()):
        own_set = set(own)
        for f in own:
            if not os.path.isfile(f) or not f.endswith(('.h', '.cc', '.cu', '.cuh')):
                continue
            for inc in INCLUDE.findall(open(f, errors='replace').read()):
                if inc in own_set or inc not in provides:
                    continue
                if provides[inc] & (deps | {lab}):
                    continue
                problems.append(f"{lab} includes {inc} ({f}): add {sorted(provides[inc])[0]}")
    for p in sorted(set(problems)):
        print("deps:", p)
    print(f"deps: {len(targets)} targets, {len(set(problems))} missing direct dependencies")
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
