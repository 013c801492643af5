#!/usr/bin/env python3
"""The op records (ops/records/*.toml, one [[op]] per op) to what is made
from them: the C++ table behind ops/op_record.h, and the op tables of
docs/OPS.md. ops/records/README.md says what each field means.

  generate.py --cc OUT.cc RECORDS...          the C++ table (a Bazel genrule)
  generate.py --backward_inc OUT RECORDS...   eager's table of backward rules
  generate.py --docs RECORDS...               the docs' tables, to stdout
  generate.py --check_docs OPS.md RECORDS...  exit 1 if OPS.md's tables differ
  generate.py --write_docs OPS.md RECORDS...  rewrite them in place
  generate.py --family PREFIX [--include STEM] RECORD
                                              a family whose records define their
                                              ops: PREFIX_<layer>_registration.{h,cc}
                                              and PREFIX_family.h (op_family() in
                                              ops/op_family.bzl runs it)

A record with an unknown field, a missing name, a bad value or a duplicate
op is an error naming the file, the op and the field (exit 1): the data is
checked before anything is made from it.
"""
import argparse
import json
import sys
import tomllib

ORIGINS = {"oneflow": "kOneFlow", "ours": "kOurs"}
BACKWARD = {"rule": "kRule", "not differentiable": "kNotDifferentiable",
            "gradient op": "kGradientOp", "not written yet": "kNotWrittenYet"}
COMPUTE = {"bytes": "kBytes", "matmul": "kMatmul"}
COLLECTIVES = {"none": "kNone", "class_split_all_reduce": "kClassSplitAllReduce"}
NOTATIONS = {"oneflow": "kOneFlow", "torch": "kTorch", "paddle": "kPaddle"}
DEVICES = ("cpu", "cuda")
# The layers a family built by op_family() registers into, one library each.
LAYERS = ("rules", "kernels", "backward")
FILE_KEYS = {"family", "rules", "op", "impl", "namespace"}
# The fields with which a record defines its op (a family built by op_family()):
# its signature, its rule and its kernels.
DEFINE_KEYS = {"inputs", "outputs", "attrs", "rule", "shape_fn", "sbp_fn", "cpu_fn", "cuda_fn", "doc"}
OP_KEYS = {"name", "origin", "kernels", "backward", "backward_fn", "compute", "kernel_collectives",
           "recipe", "alias", "ours"} | DEFINE_KEYS
RECIPE_KEYS = {"inputs", "attrs"}
ALIAS_KEYS = {"name", "in", "attrs", "non_empty"}
BEGIN = "<!-- op tables: made by ops/records/generate.py from ops/records/*.toml; do not edit -->"
END = "<!-- end of the op tables -->"


class RecordError(Exception):
    pass


def fail(where, why):
    raise RecordError(f"{where}: {why}")


def choice(where, field, value, allowed):
    if value not in allowed:
        fail(where, f"{field} = {json.dumps(value)}: expected one of {', '.join(allowed)}")
    return value


def strings(where, field, value):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        fail(where, f"{field} must be a list of strings, not {json.dumps(value)}")
    return value


def load(paths):
    """Every record, checked and completed with defaults, sorted by name."""
    ops = {}
    for path in paths:
        with open(path, "rb") as f:
            try:
                data = tomllib.load(f)
            except tomllib.TOMLDecodeError as e:
                fail(path, f"not TOML: {e}")
        for key in data:
            if key not in FILE_KEYS:
                fail(path, f"unknown top-level field {key!r}; known: {', '.join(sorted(FILE_KEYS))}")
        for key in ("family", "rules"):
            if not isinstance(data.get(key), str) or not data[key]:
                fail(path, f"needs {key} = \"...\"")
        for raw in data.get("op", []):
            name = raw.get("name")
            if not isinstance(name, str) or not name:
                fail(path, f"an [[op]] without a name: {json.dumps(raw)[:80]}")
            where = f"{path}: op {name}"
            for key in raw:
                if key not in OP_KEYS:
                    fail(where, f"unknown field {key!r}; known: {', '.join(sorted(OP_KEYS))}")
            if name in ops:
                fail(where, f"already recorded in {ops[name]['file']}")
            rec = {
                "name": name, "file": path, "family": data["family"], "rules": data["rules"],
                "origin": choice(where, "origin", raw.get("origin", "oneflow"), ORIGINS),
                "kernels": strings(where, "kernels", raw.get("kernels", list(DEVICES))),
                "backward": choice(where, "backward", raw.get("backward", "rule"), BACKWARD),
                "compute": choice(where, "compute", raw.get("compute", "bytes"), COMPUTE),
                "kernel_collectives": choice(where, "kernel_collectives",
                                             raw.get("kernel_collectives", "none"), COLLECTIVES),
                "recipe": None, "aliases": [],
                "ours": raw.get("ours"),
            }
            if rec["ours"] is not None:
                if not isinstance(rec["ours"], str) or not rec["ours"].strip():
                    fail(where, "ours must say which candidates the rule appends after OneFlow's list, and why")
                if rec["origin"] != "oneflow":
                    fail(where, 'ours is for an op whose list is OneFlow\'s (origin = "oneflow"); '
                                "every candidate of an op that is ours is ours")
            for d in rec["kernels"]:
                choice(where, "kernels", d, DEVICES)
            fn = raw.get("backward_fn")
            if rec["backward"] == "rule":
                if not isinstance(fn, str) or not fn.strip():
                    fail(where, 'backward = "rule" needs backward_fn, the rule in '
                                "eager/backward_rules.cc (a name, or a C++ expression of a BackwardFn)")
            elif fn is not None:
                fail(where, f'backward = "{rec["backward"]}" has no rule, so no backward_fn')
            rec["backward_fn"] = fn
            if "recipe" in raw:
                r = raw["recipe"]
                if not isinstance(r, dict):
                    fail(where, "recipe must be a table { inputs = [...], attrs = [...] }")
                for key in r:
                    if key not in RECIPE_KEYS:
                        fail(where, f"unknown recipe field {key!r}; known: inputs, attrs")
                if "inputs" not in r:
                    fail(where, "recipe needs inputs = [...]")
                rec["recipe"] = {"inputs": strings(where, "recipe.inputs", r["inputs"]),
                                 "attrs": strings(where, "recipe.attrs", r.get("attrs", []))}
            for a in raw.get("alias", []):
                aw = f"{where}: alias {a.get('name')!r}"
                for key in a:
                    if key not in ALIAS_KEYS:
                        fail(aw, f"unknown field {key!r}; known: {', '.join(sorted(ALIAS_KEYS))}")
                if not isinstance(a.get("name"), str) or not a["name"]:
                    fail(where, "an alias needs name = \"...\"")
                notations = strings(aw, "in", a.get("in", []))
                if not notations:
                    fail(aw, "needs in = [...] (oneflow, torch, paddle)")
                for n in notations:
                    choice(aw, "in", n, NOTATIONS)
                attrs = a.get("attrs", {})
                if not isinstance(attrs, dict) or not all(isinstance(v, str) for v in attrs.values()):
                    fail(aw, "attrs must be a table { alias_name = \"op_name\" }")
                non_empty = strings(aw, "non_empty", a.get("non_empty", []))
                for n in non_empty:
                    if n not in attrs:
                        fail(aw, f"non_empty names {n!r}, which attrs does not rename")
                rec["aliases"].append({"name": a["name"], "in": notations,
                                       "attrs": list(attrs.items()), "non_empty": non_empty})
            rec["define"] = definition(where, raw, rec, data) if DEFINE_KEYS & raw.keys() else None
            ops[name] = rec
    return [ops[k] for k in sorted(ops)]


def definition(where, raw, rec, data):
    """The op as its record defines it: signature, rule and kernel functions."""
    impl = data.get("impl")
    if isinstance(impl, str):
        impl = {layer: impl for layer in LAYERS}
    if not isinstance(impl, dict) or set(impl) != set(LAYERS) or \
            not all(isinstance(v, str) for v in impl.values()) or not isinstance(data.get("namespace"), str):
        fail(where, 'defines its op, so its file needs impl = "<header of its functions>" (or one '
                    'header per layer: impl = { rules = "...", kernels = "...", backward = "..." }) '
                    'and namespace = "<their C++ namespace>"')
    d = {"inputs": strings(where, "inputs", raw.get("inputs", [])),
         "outputs": strings(where, "outputs", raw.get("outputs", [])),
         "attrs": [], "doc": raw.get("doc", "")}
    if not d["outputs"]:
        fail(where, "defines its op, so it needs outputs = [...]")
    attrs = raw.get("attrs", {})
    if not isinstance(attrs, dict):
        fail(where, "attrs must be a table { name = default }")
    for k, v in attrs.items():
        if not isinstance(v, (bool, int, float, str)):
            fail(where, f"attrs.{k} = {json.dumps(v)}: a default is a bool, integer, float or string")
        d["attrs"].append((k, v))
    rule, shape_fn, sbp_fn = raw.get("rule"), raw.get("shape_fn"), raw.get("sbp_fn")
    if rule is not None:
        if shape_fn is not None or sbp_fn is not None:
            fail(where, "rule gives the shape function and the SBP rule; drop shape_fn and sbp_fn")
        if not isinstance(rule, str) or not rule.startswith("einsum "):
            fail(where, f'rule = {json.dumps(rule)}: expected "einsum <spec>" (ops/einsum_rule.h), '
                        "or shape_fn and sbp_fn")
        if not d["inputs"] or len(d["outputs"]) != 1:
            fail(where, "an einsum rule needs named inputs and exactly one output")
        d["einsum"] = rule[len("einsum "):].strip()
    else:
        if not isinstance(shape_fn, str) or not isinstance(sbp_fn, str):
            fail(where, "defines its op, so it needs its rule: rule = \"einsum <spec>\", "
                        "or shape_fn and sbp_fn (functions of impl)")
        d["shape_fn"], d["sbp_fn"] = shape_fn, sbp_fn
    for device in DEVICES:
        fn = raw.get(f"{device}_fn")
        if (device in rec["kernels"]) != (fn is not None):
            fail(where, f"kernels lists {device}, so it needs {device}_fn, its kernel"
                 if fn is None else f"has {device}_fn but kernels does not list {device}")
        d[f"{device}_fn"] = fn
    d["impl"], d["namespace"] = impl, data["namespace"]
    return d


def cc_string(s):
    return json.dumps(s)  # a JSON string of ASCII text is a valid C++ literal


def cc_strings(values):
    return "{" + ", ".join(cc_string(v) for v in values) + "}"


def make_cc(records):
    for r in records:
        if r["define"] is not None:
            fail(f"{r['file']}: op {r['name']}", "defines its op (inputs, rule, kernels); such a family is "
                 "built by op_family() in ops/op_family.bzl, not with the built-in records")
    out = [
        "// Made by ops/records/generate.py from ops/records/*.toml: do not edit;",
        "// change the records.",
        '#include "ops/op_record.h"',
        "",
        "#include <utility>",
        "#include <vector>",
        "",
        "namespace oneflow_sbp::ops {",
        "",
        "// One block per record, sorted by name (FindOpRecord searches it).",
        "std::vector<OpRecord> MakeBuiltinOpRecords() {",
        "  std::vector<OpRecord> records;",
        f"  records.reserve({len(records)});",
    ]
    for r in records:
        out.append("  {")
        out.append("    OpRecord r;")
        out.append(f"    r.name = {cc_string(r['name'])};")
        out.append(f"    r.family = {cc_string(r['family'])};")
        out.append(f"    r.record_file = {cc_string(r['file'])};")
        out.append(f"    r.rules_file = {cc_string(r['rules'])};")
        out.append(f"    r.origin = OpOrigin::{ORIGINS[r['origin']]};")
        out.append(f"    r.cpu_kernel = {'true' if 'cpu' in r['kernels'] else 'false'};")
        out.append(f"    r.cuda_kernel = {'true' if 'cuda' in r['kernels'] else 'false'};")
        out.append(f"    r.backward = BackwardKind::{BACKWARD[r['backward']]};")
        out.append(f"    r.compute = ComputeModel::{COMPUTE[r['compute']]};")
        out.append(f"    r.kernel_collectives = KernelCollectives::{COLLECTIVES[r['kernel_collectives']]};")
        if r["ours"] is not None:
            out.append(f"    r.ours = {cc_string(r['ours'])};")
        if r["recipe"] is not None:
            out.append(f"    r.recipe = VerifierRecipe{{{cc_strings(r['recipe']['inputs'])}, "
                       f"{cc_strings(r['recipe']['attrs'])}}};")
        for a in r["aliases"]:
            notations = ", ".join(f"Notation::{NOTATIONS[n]}" for n in a["in"])
            renamed = ", ".join(
                f"AliasAttr{{{cc_string(x)}, {cc_string(y)}, {'true' if x in a['non_empty'] else 'false'}}}"
                for x, y in a["attrs"])
            out.append(f"    r.aliases.push_back(OpAliasRecord{{{cc_string(a['name'])}, {{{notations}}}, "
                       f"{{{renamed}}}}});")
        out.append("    records.push_back(std::move(r));")
        out.append("  }")
    out += ["  return records;", "}", "", "}  // namespace oneflow_sbp::ops", ""]
    return "\n".join(out)


def make_backward_inc(records):
    """The entries of eager's rule table, {"op", rule}, one per record whose
    backward is a rule; backward_rules.cc includes it inside its table."""
    out = ["// Made by ops/records/generate.py from ops/records/*.toml (backward_fn):",
           "// do not edit; change the records."]
    for r in records:
        if r["backward"] == "rule":
            out.append(f"{{{cc_string(r['name'])}, {r['backward_fn']}}},")
    return "\n".join(out) + "\n"


def camel(family):
    return "".join(part[:1].upper() + part[1:] for part in family.replace("-", "_").split("_"))


def cc_attr(value):
    if isinstance(value, bool):
        return f"AttrValue({'true' if value else 'false'})"
    if isinstance(value, int):
        return f"AttrValue(int64_t{{{value}}})"
    if isinstance(value, float):
        return f"AttrValue({value!r})"
    return f"AttrValue(std::string({cc_string(value)}))"


def make_family(records, stem):
    """A family whose records define their ops, as seven files: for each
    layer (rules, kernels, backward) a header of its registration function
    and a .cc registering into that layer's process-wide registry at
    start-up, and PREFIX_family.h including the three. Each layer's files
    include only that layer's headers and the impl header it names, so the
    rules link without kernels or autograd."""
    undefined = [r["name"] for r in records if r["define"] is None]
    if not records or undefined:
        fail(records[0]["file"] if records else "op_family",
             "op_family() builds families whose every record defines its op; not defining: "
             f"{', '.join(undefined) or '(no records)'}")
    families = {r["family"] for r in records}
    if len(families) != 1:
        fail(records[0]["file"], f"one family per op_family(), not {sorted(families)}")
    first = records[0]
    fam, ns, impl, record_file = camel(first["family"]), first["define"]["namespace"], \
        first["define"]["impl"], first["file"]
    banner = [f"// Made by ops/records/generate.py from {record_file}: do not edit; change",
              "// the record (or the functions it names)."]
    signatures = {
        "rules": (["oneflow_sbp/rule_api/op_registry.h"],
                  f"absl::Status Register{fam}Rules(::oneflow_sbp::OpRegistry* registry)"),
        "kernels": (["kernels/kernel_registry.h"],
                    f"absl::Status Register{fam}Kernels(::oneflow_sbp::kernels::KernelRegistry& registry)"),
        "backward": ([], f"absl::Status Register{fam}Backward()"),
    }
    comments = {"rules": "The family's ops into `registry`; kAlreadyExists if one is taken.",
                "kernels": "The family's kernels into `registry`; kAlreadyExists if one is taken.",
                "backward": "The family's backward rules into eager's process-wide table."}

    def guard(suffix):
        return "".join(c if c.isalnum() else "_" for c in (stem + suffix).upper()) + "_"

    def header(layer):
        includes, signature = signatures[layer]
        g = guard(f"_{layer}_registration.h")
        return banner + [f"#ifndef {g}", f"#define {g}", "", '#include "absl/status/status.h"'] + \
            [f'#include "{i}"' for i in includes] + \
            ["", f"namespace {ns} {{", "", f"// {comments[layer]}", f"{signature};", "",
             f"}}  // namespace {ns}", "", f"#endif  // {g}", ""]

    def start(layer, includes):
        return banner + [f'#include "{stem}_{layer}_registration.h"', ""] + \
            [f'#include "{i}"' for i in sorted(set(includes + [impl[layer]]))] + \
            ["", f"namespace {ns} {{", "", signatures[layer][1] + " {"]

    # A record that cannot register is a defect of the program that links it
    # (a duplicate name, a malformed spec), found at start-up with the
    # record's name, as OFS_REGISTER_OP does.
    def static(call):
        return ["  return absl::OkStatus();", "}", "", "namespace {", "const bool kRegistered = [] {",
                f"  const absl::Status s = {call};",
                f'  OFS_CHECK(s.ok()) << "{record_file}: " << s.message();',
                "  return true;", "}();", "}  // namespace", "", f"}}  // namespace {ns}", ""]

    common = ["oneflow_sbp/values/check.h", "oneflow_sbp/values/status_macros.h"]
    rules = start("rules", common + ["ops/einsum_rule.h"])
    for r in records:
        d = r["define"]
        rules.append("  {")
        if "einsum" in d:
            rules.append(f"    OFS_ASSIGN_OR_RETURN(::oneflow_sbp::OpDefBuilder op, ::oneflow_sbp::ops::EinsumOp("
                         f"{cc_string(r['name'])}, {cc_string(d['einsum'])}, {cc_strings(d['inputs'])}, "
                         f"{cc_string(d['outputs'][0])}));")
        else:
            rules.append(f"    ::oneflow_sbp::OpDefBuilder op({cc_string(r['name'])});")
            rules += [f"    op.Input({cc_string(i)});" for i in d["inputs"]]
            rules += [f"    op.Output({cc_string(o)});" for o in d["outputs"]]
            rules.append(f"    op.SetShapeFn({d['shape_fn']}).SetGetSbpFn({d['sbp_fn']});")
        rules += [f"    op.Attr({cc_string(k)}, ::oneflow_sbp::{cc_attr(v)});" for k, v in d["attrs"]]
        if d["doc"]:
            rules.append(f"    op.Doc({cc_string(d['doc'])});")
        rules += ["    OFS_RETURN_IF_ERROR(registry->Register(op));", "  }"]
    rules += static(f"Register{fam}Rules(&::oneflow_sbp::OpRegistry::Global())")
    kernels = start("kernels", common)
    for r in records:
        for device, enum in (("cpu", "kCpu"), ("cuda", "kCuda")):
            fn = r["define"][f"{device}_fn"]
            if fn is None:
                continue
            line = (f"  OFS_RETURN_IF_ERROR(registry.Register({cc_string(r['name'])}, "
                    f"::oneflow_sbp::DeviceType::{enum}, {fn}));")
            # A CUDA kernel exists only in a CUDA build.
            kernels += ["#ifdef OFS_WITH_CUDA", line, "#endif"] if device == "cuda" else [line]
    kernels += static(f"Register{fam}Kernels(::oneflow_sbp::kernels::KernelRegistry::Global())")
    backward = start("backward", common + ["eager/autograd.h"])
    for r in records:
        if r["backward"] == "rule":
            backward.append(f"  OFS_RETURN_IF_ERROR(::oneflow_sbp::eager::RegisterBackward("
                            f"{cc_string(r['name'])}, {r['backward_fn']}));")
    backward += static(f"Register{fam}Backward()")
    g = guard("_family.h")
    family = banner + [f"#ifndef {g}", f"#define {g}", "", "// Every layer's registration."] + \
        [f'#include "{stem}_{layer}_registration.h"' for layer in LAYERS] + ["", f"#endif  // {g}", ""]
    out = {"_family.h": "\n".join(family)}
    for layer, text in zip(LAYERS, (rules, kernels, backward)):
        out[f"_{layer}_registration.h"] = "\n".join(header(layer))
        out[f"_{layer}_registration.cc"] = "\n".join(text)
    return out


def alias_text(a):
    s = f"`{a['name']}` ({'/'.join(a['in'])}"
    if a["attrs"]:
        s += "; " + ", ".join(f"{x} for {y}" for x, y in a["attrs"])
    return s + ")"


def make_docs(records):
    families = {}
    for r in records:
        families.setdefault((r["family"], r["rules"], r["file"]), []).append(r["name"])
    out = [BEGIN, "", "| family | rules | record | ops |", "| --- | --- | --- | --- |"]
    for (family, rules, path), names in sorted(families.items(), key=lambda kv: kv[0][2]):
        out.append(f"| {family} | `{rules}` | `{path}` | {', '.join(names)} |")
    out += ["", f"Every op ({len(records)}): where OneFlow's op and list come first (`oneflow`) or the "
            "op is ours, its kernels, its backward, and its names in other notations.", "",
            "| op | origin | kernels | backward | planner | also called |",
            "| --- | --- | --- | --- | --- | --- |"]
    for r in records:
        extras = []
        if r["compute"] != "bytes":
            extras.append(f"compute: {r['compute']}")
        if r["kernel_collectives"] != "none":
            extras.append(f"kernel collectives: {r['kernel_collectives']}")
        out.append(f"| {r['name']} | {r['origin']} | {' '.join(r['kernels'])} | {r['backward']} | "
                   f"{'; '.join(extras)} | "
                   f"{', '.join(alias_text(a) for a in r['aliases'])} |")
    appended = [r for r in records if r["ours"] is not None]
    out += ["", f"Candidates our rules append after OneFlow's own list ({len(appended)} ops; the record's "
            "`ours`, and `SbpContext::OursFollow()` in the rule where they start), so OneFlow's "
            "candidates keep their order:", "", "| op | appended after OneFlow's list |", "| --- | --- |"]
    for r in appended:
        out.append(f"| {r['name']} | {r['ours']} |")
    out += ["", END]
    return "\n".join(out)


def replace_docs(text, tables, path):
    if BEGIN not in text or END not in text:
        fail(path, f"has no op tables between {BEGIN!r} and {END!r}")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + tables + tail


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--cc")
    g.add_argument("--backward_inc")
    g.add_argument("--docs", action="store_true")
    g.add_argument("--check_docs")
    g.add_argument("--write_docs")
    g.add_argument("--family")
    p.add_argument("--include", help="with --family: the files' include path without the suffix "
                   "(op_family() passes <package>/<name>); default: PREFIX")
    p.add_argument("records", nargs="+")
    args = p.parse_args(argv)
    try:
        records = load(args.records)
        if args.cc:
            with open(args.cc, "w") as f:
                f.write(make_cc(records))
        elif args.backward_inc:
            with open(args.backward_inc, "w") as f:
                f.write(make_backward_inc(records))
        elif args.family:
            for suffix, text in make_family(records, args.include or args.family).items():
                with open(args.family + suffix, "w") as f:
                    f.write(text)
        elif args.docs:
            print(make_docs(records))
        else:
            path = args.check_docs or args.write_docs
            with open(path) as f:
                text = f.read()
            new = replace_docs(text, make_docs(records), path)
            if args.write_docs:
                with open(path, "w") as f:
                    f.write(new)
            elif new != text:
                print(f"{path}: the op tables differ from ops/records/*.toml; run "
                      f"python3 ops/records/generate.py --write_docs {path} ops/records/*.toml",
                      file=sys.stderr)
                return 1
    except RecordError as e:
        print(f"generate.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
