#include "oneflow_sbp/rule_api/op_call.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

absl::StatusOr<std::vector<int>> OpCall::DeduceInputCounts(const OpDef& def,
                                                           int num_inputs) {
  const std::vector<ArgDef>& args = def.inputs();
  std::vector<int> counts(args.size(), 0);
  int required = 0;
  int variadic = -1;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].variadic) variadic = static_cast<int>(i);
    if (!args[i].optional) {
      counts[i] = 1;
      ++required;
    }
  }
  int left = num_inputs - required;
  if (left < 0) {
    std::vector<std::string> names;
    for (const ArgDef& a : args) {
      if (!a.optional) names.push_back(a.name);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        def.type_name(), " takes at least ", required, " input",
        required == 1 ? "" : "s", " (", absl::StrJoin(names, ", "), "); got ",
        num_inputs));
  }
  for (size_t i = 0; i < args.size() && left > 0; ++i) {
    if (args[i].optional && !args[i].variadic) {
      counts[i] = 1;
      --left;
    }
  }
  if (left > 0) {
    if (variadic < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          def.type_name(), " takes at most ", num_inputs - left, " inputs; got ",
          num_inputs));
    }
    counts[variadic] += left;
  }
  return counts;
}

namespace {

// `input_counts` gives every declared input arg a blob count it can take.
absl::Status CheckInputCounts(const OpDef& def, const std::vector<int>& input_counts) {
  const std::string& op = def.type_name();
  if (input_counts.size() != def.inputs().size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": ", input_counts.size(), " input counts for ", def.inputs().size(),
        " declared input args"));
  }
  for (size_t i = 0; i < input_counts.size(); ++i) {
    const ArgDef& a = def.inputs()[i];
    const int c = input_counts[i];
    if (c < 0 || (c == 0 && !a.optional) || (c > 1 && !a.variadic)) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": input ", QuotedInput(a.name), " cannot have ", c, " blobs",
          a.variadic ? "" : " (not variadic)"));
    }
  }
  return absl::OkStatus();
}

// The caller's `attrs` checked against the declarations (ints widen to
// declared floats), then the defaults of the attributes left out.
absl::StatusOr<AttrMap> ResolveAttrs(const OpDef& def, const AttrMap& attrs) {
  const std::string& op = def.type_name();
  AttrMap resolved;
  for (const auto& [name, value] : attrs.entries()) {
    const AttrDef* decl = def.FindAttr(name);
    if (decl == nullptr) {
      std::vector<std::string> known;
      for (const AttrDef& a : def.attrs()) known.push_back(a.name);
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": unknown attribute ", QuotedInput(name),
          known.empty() ? "; the op has no attributes"
                        : absl::StrCat("; known: ", absl::StrJoin(known, ", "))));
    }
    if (value.type() == decl->type) {
      resolved.Set(name, value);
    } else if (decl->type == AttrType::kFloat && value.type() == AttrType::kInt) {
      resolved.Set(name, AttrValue(static_cast<double>(value.i())));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": attribute ", QuotedInput(name), " is ", AttrTypeName(decl->type), ", got ",
          AttrTypeName(value.type()), " ", QuotedInput(value.ToString())));
    }
  }
  for (const AttrDef& a : def.attrs()) {
    if (resolved.Find(a.name) != nullptr) continue;
    if (!a.default_value) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": required attribute ", QuotedInput(a.name), " (", AttrTypeName(a.type),
          ") is missing"));
    }
    resolved.Set(a.name, *a.default_value);
  }
  return resolved;
}

// The blob count of every output arg: the definition's arity function's
// answer, checked, or one blob each without one.
absl::StatusOr<std::vector<int>> OutputCounts(const OpDef& def, const AttrMap& attrs,
                                              const std::vector<int>& input_counts) {
  if (!def.output_arity_fn()) return std::vector<int>(def.outputs().size(), 1);
  const std::string& op = def.type_name();
  absl::StatusOr<std::vector<int>> counts = def.output_arity_fn()(attrs, input_counts);
  if (!counts.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", counts.status().message()));
  }
  if (counts->size() != def.outputs().size()) {
    return absl::InternalError(absl::StrCat(
        op, ": output arity function gave ", counts->size(), " counts for ",
        def.outputs().size(), " output args"));
  }
  for (size_t i = 0; i < counts->size(); ++i) {
    if ((*counts)[i] < 1 || ((*counts)[i] > 1 && !def.outputs()[i].variadic)) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": output '", def.outputs()[i].name, "' cannot have ",
          (*counts)[i], " blobs"));
    }
  }
  return counts;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const OpCall>> OpCall::Make(
    std::shared_ptr<const OpDef> def, std::vector<int> input_counts,
    const AttrMap& attrs) {
  if (def == nullptr) {
    // OpRegistry::Find's answer for an unknown name: a user's mistake, not
    // a broken invariant.
    return absl::InvalidArgumentError(
        "no op definition (an unknown op name? OpRegistry::Get and Engine::MakeCall name "
        "the op and suggest close names)");
  }
  absl::Status s = CheckInputCounts(*def, input_counts);
  OFS_RETURN_IF_ERROR(s);
  auto call = std::shared_ptr<OpCall>(new OpCall());
  call->def_ = def;
  call->input_counts_ = std::move(input_counts);

  OFS_ASSIGN_OR_RETURN(AttrMap resolved, ResolveAttrs(*def, attrs));
  call->attrs_ = std::move(resolved);

  OFS_ASSIGN_OR_RETURN(std::vector<int> output_counts, OutputCounts(*def, call->attrs_,
      call->input_counts_));
  call->output_counts_ = std::move(output_counts);

  for (int is_input = 1; is_input >= 0; --is_input) {
    const std::vector<ArgDef>& args = is_input ? def->inputs() : def->outputs();
    const std::vector<int>& counts = is_input ? call->input_counts_ : call->output_counts_;
    for (size_t a = 0; a < args.size(); ++a) {
      for (int k = 0; k < counts[a]; ++k) {
        call->blobs_.push_back(Blob{is_input == 1, static_cast<int>(a), k});
        call->bns_.push_back(absl::StrCat(args[a].name, "_", k));
        (is_input ? call->input_args_ : call->output_args_)
            .push_back(OpArg{args[a].name, k});
      }
    }
    if (is_input) call->num_inputs_ = static_cast<int>(call->blobs_.size());
  }
  // The definition's identity is part of the key: two registries may both
  // define "my_op", differently, and a cache shared by them must not mix
  // them up. Its address is stable for the life of the call (shared_ptr).
  call->hash_ = absl::HashOf(static_cast<const void*>(call->def_.get()), call->input_counts_,
                             call->output_counts_, call->attrs_);
  return std::shared_ptr<const OpCall>(std::move(call));
}

// Blobs of one arg are consecutive, args in declared order, so a blob's
// index is its arg's offset plus its index: no scan over the blobs, which
// made ops with many variadic inputs quadratic (64k add_n inputs: 14.6 s).
namespace {
int BlobOffset(const std::vector<int>& counts, int arg, int index) {
  if (arg < 0 || index < 0 || index >= counts[arg]) return -1;
  int offset = 0;
  for (int a = 0; a < arg; ++a) offset += counts[a];
  return offset + index;
}
}  // namespace

int OpCall::InputBlob(absl::string_view arg, int index) const {
  return BlobOffset(input_counts_, def_->FindInput(arg), index);
}

int OpCall::OutputBlob(absl::string_view arg, int index) const {
  const int k = BlobOffset(output_counts_, def_->FindOutput(arg), index);
  return k < 0 ? -1 : num_inputs_ + k;
}

int OpCall::BlobIndexOf(absl::string_view bn) const {
  // "<arg>_<index>": arg names may contain '_', indices are digits.
  const size_t cut = bn.rfind('_');
  int index = 0;
  if (cut == absl::string_view::npos || !absl::SimpleAtoi(bn.substr(cut + 1), &index)) {
    return -1;
  }
  const absl::string_view arg = bn.substr(0, cut);
  int b = InputBlob(arg, index);
  if (b < 0) b = OutputBlob(arg, index);
  // "a_01" or "a_+1" parse as index 1 but name no blob.
  return b >= 0 && bns_[b] == bn ? b : -1;
}

bool OpCall::is_mutable_input(int blob) const {
  return blob < num_inputs_ && def_->inputs()[blobs_[blob].arg].is_mutable;
}

std::string OpCall::ToString() const {
  std::string out = absl::StrCat(type_name(), "(");
  for (int b = 0; b < num_blobs(); ++b) {
    if (b == num_inputs_) out += b == 0 ? "-> " : " -> ";
    else if (b > 0) out += ", ";
    out += bns_[b];
  }
  if (!attrs_.entries().empty()) absl::StrAppend(&out, "; ", attrs_.ToString());
  return out + ")";
}

bool operator==(const OpCall& a, const OpCall& b) {
  if (&a == &b) return true;
  return a.hash_ == b.hash_ && a.def_ == b.def_ &&
         a.input_counts_ == b.input_counts_ && a.output_counts_ == b.output_counts_ &&
         a.attrs_ == b.attrs_;
}

absl::StatusOr<std::vector<TensorDesc>> OpCall::InferOutputDescs(
    absl::Span<const TensorDesc> inputs) const {
  if (static_cast<int>(inputs.size()) != num_inputs_) {
    return absl::InvalidArgumentError(absl::StrCat(
        type_name(), ": expected ", num_inputs_, " input tensors, got ",
        inputs.size()));
  }
  ShapeContext ctx(*this, inputs);
  absl::Status s = def_->shape_fn()(ctx);
  if (s.ok()) s = ctx.status();
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat(type_name(), ": ", s.message()));
  }
  std::vector<TensorDesc> outs;
  outs.reserve(num_outputs());
  for (int k = 0; k < num_outputs(); ++k) {
    if (!ctx.outputs()[k]) {
      return absl::InternalError(absl::StrCat(
          type_name(), ": shape function left output ", bns_[num_inputs_ + k],
          " unset"));
    }
    outs.push_back(*ctx.outputs()[k]);
  }
  return outs;
}

ShapeContext::ShapeContext(const OpCall& call, absl::Span<const TensorDesc> inputs)
    : call_(call), inputs_(inputs), outputs_(call.num_outputs()) {}

const TensorDesc& ShapeContext::input(absl::string_view arg, int index) {
  const int b = call_.InputBlob(arg, index);
  if (b < 0) {
    static const TensorDesc* const kMissingBlobDesc = new TensorDesc();
    if (status_.ok()) {
      status_ = absl::InternalError(absl::StrCat(
          "shape function asked for input ", arg, "_", index,
          ", which this call does not have"));
    }
    return *kMissingBlobDesc;
  }
  return inputs_[b];
}

bool ShapeContext::has_input(absl::string_view arg, int index) const {
  return call_.InputBlob(arg, index) >= 0;
}

int ShapeContext::input_count(absl::string_view arg) const {
  const int a = call_.def().FindInput(arg);
  return a < 0 ? 0 : call_.input_counts()[a];
}

int ShapeContext::output_count(absl::string_view arg) const {
  const int a = call_.def().FindOutput(arg);
  return a < 0 ? 0 : call_.output_counts()[a];
}

void ShapeContext::set_output(absl::string_view arg, int index, TensorDesc desc) {
  const int b = call_.OutputBlob(arg, index);
  if (b < 0) {
    if (status_.ok()) {
      status_ = absl::InternalError(absl::StrCat(
          "shape function set output ", arg, "_", index,
          ", which this call does not have"));
    }
    return;
  }
  outputs_[b - call_.num_inputs()] = std::move(desc);
}

}  // namespace oneflow_sbp
