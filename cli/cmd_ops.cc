#include "cli/cmd_ops.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/data_type.h"
#include "io/infer_proto.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_record.h"
#include "proto/op_def.pb.h"
#include "cli/cli_format.h"

namespace oneflow_sbp::cli {
namespace {

std::string ArgsText(const google::protobuf::RepeatedPtrField<oneflow::ArgDefProto>& args) {
  std::vector<std::string> parts;
  for (const auto& a : args) {
    parts.push_back(absl::StrCat(a.name(), a.variadic() ? "..." : "", a.optional() ? "?" : "",
                                 a.is_mutable() ? " (mutable)" : ""));
  }
  return absl::StrJoin(parts, ", ");
}

std::string AttrsText(const oneflow::OpDefProto& op) {
  std::vector<std::string> parts;
  for (const auto& a : op.attr()) {
    parts.push_back(a.has_default_value()
                        ? absl::StrCat(a.name(), ":", a.type(), "=", a.default_value())
                        : absl::StrCat(a.name(), ":", a.type(), " (required)"));
  }
  return absl::StrJoin(parts, ", ");
}

// "f32 f64" for the kernel's documented dtypes; "" if it has none.
std::string DtypesText(const std::vector<DataType>& dtypes) {
  std::vector<std::string> names;
  for (DataType d : dtypes) names.emplace_back(DataTypeName(d));
  return absl::StrJoin(names, " ");
}

// "mean (dim for axis, keepdim for keepdims)": an alias and the attributes
// it names differently from its op; the bare name when it renames none.
std::string AliasText(const OpRegistry& registry, const std::string& alias) {
  std::vector<std::string> renames;
  for (const AliasAttr& r : registry.RenamedAttrsOf(alias)) {
    renames.push_back(absl::StrCat(r.name, " for ", r.op_name));
  }
  return renames.empty() ? alias : absl::StrCat(alias, " (", absl::StrJoin(renames, ", "), ")");
}

}  // namespace

namespace {

// Where everything about a built-in op is (its record, ops/op_record.h),
// and what the record says beyond the registry: "" for an op without one.
std::string RecordText(const std::string& op) {
  const ops::OpRecord* r = ops::FindOpRecord(op);
  if (r == nullptr) return "";
  std::vector<std::string> kernels;
  if (r->cpu_kernel) kernels.push_back("cpu");
  if (r->cuda_kernel) kernels.push_back("cuda");
  std::string text = absl::StrCat(
      "record:  ", r->record_file, " (family ", r->family, ", ",
      r->origin == ops::OpOrigin::kOneFlow ? "OneFlow's op and list" : "ours, not OneFlow's",
      "; kernels ", absl::StrJoin(kernels, " "), "; backward: ", ops::BackwardKindName(r->backward),
      ")\n");
  std::vector<std::string> paddle;
  for (const ops::OpAliasRecord& a : r->aliases) {
    if (a.In(ops::Notation::kPaddle)) paddle.push_back(a.name);
  }
  if (!paddle.empty()) absl::StrAppend(&text, "paddle:  ", absl::StrJoin(paddle, ", "), "\n");
  if (!r->ours.empty()) absl::StrAppend(&text, "ours:    after OneFlow's list, ", r->ours, "\n");
  return text;
}

// One line per op, then the aliases.
std::string CatalogText(const oneflow::OpDefListProto& list, const OpRegistry& registry,
                        const std::function<bool(const std::string&)>& has_kernel) {
  int fallback = 0;
  std::vector<std::string> no_kernel;
  for (const auto& d : list.op()) {
    fallback += d.broadcast_fallback() ? 1 : 0;
    if (!has_kernel(d.op_type_name())) no_kernel.push_back(d.op_type_name());
  }
  std::string text = absl::StrCat(list.op_size(), " ops, ", list.op_size() - no_kernel.size(),
                      " with a cpu kernel",
                      no_kernel.empty() ? "" : " (the rest marked [no cpu kernel])",
                      fallback ? absl::StrCat(", ", fallback, " without an SBP rule (marked !)")
                               : "",
                      "; `sbp ops OP` for one op. ? = optional, ... = variadic\n");
  for (const auto& d : list.op()) {
    const std::string attrs = AttrsText(d);
    absl::StrAppend(&text, absl::StrFormat("%s%-26s (%s) -> (%s)%s%s\n",
                                           d.broadcast_fallback() ? "!" : " ",
                                           d.op_type_name(), ArgsText(d.input()),
                                           ArgsText(d.output()),
                                           attrs.empty() ? "" : "  " + attrs,
                                           has_kernel(d.op_type_name()) ? ""
                                                                        : "  [no cpu kernel]"));
  }
  // Aliases last, so the op lines above keep one op per line.
  const std::vector<std::pair<std::string, std::string>> aliases = registry.Aliases();
  if (!aliases.empty()) {
    std::vector<std::string> pairs;
    for (const auto& [alias, canonical] : aliases) {
      pairs.push_back(absl::StrCat(alias, " = ", canonical));
      const std::string text = AliasText(registry, alias);
      if (text != alias) absl::StrAppend(&pairs.back(), text.substr(alias.size()));
    }
    absl::StrAppend(&text, "aliases (OneFlow/PyTorch names accepted for the op): ",
                    absl::StrJoin(pairs, ", "), "\n");
  }
  return text;
}

// One op in detail (`op` as the user typed it: an alias is named so).
std::string OneOpText(const std::string& op, const oneflow::OpDefProto& d,
                      const OpRegistry& registry, const kernels::KernelRegistry& kr,
                      const std::function<bool(const std::string&)>& has_kernel) {
  std::vector<std::string> aliases;
  for (const std::string& a : registry.AliasesOf(d.op_type_name())) {
    aliases.push_back(AliasText(registry, a));
  }
  std::string text = absl::StrCat("op:      ", d.op_type_name(),
                      op != d.op_type_name() ? absl::StrCat(" ('", op, "' is an alias)") : "",
                      "\n", aliases.empty() ? "" : absl::StrCat("aliases: ", absl::StrJoin(aliases, ", "), "\n"),
                      "inputs:  ", ArgsText(d.input()),
                      "\n", "outputs: ", ArgsText(d.output()), "\n",
                      "attrs:   ", AttrsText(d).empty() ? "none" : AttrsText(d), "\n",
                      "rule:    ",
                      d.broadcast_fallback() ? "none; broadcast-only fallback (every "
                                               "blob B)"
                                             : "yes",
                      "\n", "kernel:  ",
                      has_kernel(d.op_type_name())
                          ? absl::StrCat("cpu (", DtypesText(kr.Dtypes(d.op_type_name(),
                                                                       DeviceType::kCpu)),
                                         ")")
                          : "none for cpu (eager Apply rejects the op)",
                      "\n");
  absl::StrAppend(&text, RecordText(d.op_type_name()));
  if (d.has_doc()) absl::StrAppend(&text, "\n", d.doc(), "\n");
  absl::StrAppend(&text, "\nblob names: <arg>_<index>, e.g. ",
                  d.input_size() ? d.input(0).name() : d.output(0).name(),
                  "_0. Try: sbp infer --op=", d.op_type_name(),
                  " --placement=cpu:0-1 --input=... --format=table\n");
  return text;
}

}  // namespace

absl::StatusOr<std::string> RunOps(const std::string& op, const std::string& format,
                                   const OpRegistry& registry,
                                   const kernels::KernelRegistry* kernels) {
  const kernels::KernelRegistry& kr =
      kernels != nullptr ? *kernels : kernels::KernelRegistry::Global();
  auto has_kernel = [&](const std::string& name) {
    return kr.Find(name, DeviceType::kCpu).ok();
  };
  OFS_ASSIGN_OR_RETURN(OutputFormat fmt, ParseOutputFormat(format, "text|json|textproto"));
  oneflow::OpDefListProto list;
  std::vector<std::string> names;
  if (op.empty()) {
    names = registry.OpNames();
  } else {
    OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpDef> def, registry.Get(op));
    // `op` may be an alias; show the op it names under its canonical name.
    names.push_back(def->type_name());
  }
  for (const std::string& name : names) {
    oneflow::OpDefProto* proto = list.add_op();
    *proto = io::OpDefToProto(*registry.Find(name));
    for (const std::string& alias : registry.AliasesOf(name)) proto->add_alias(alias);
  }
  const std::string text = op.empty() ? CatalogText(list, registry, has_kernel)
                                       : OneOpText(op, list.op(0), registry, kr, has_kernel);
  return Render(fmt, list, text);
}

}  // namespace oneflow_sbp::cli
