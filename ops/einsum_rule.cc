#include "ops/einsum_rule.h"

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

absl::Status CheckLetters(absl::string_view spec, absl::string_view operand,
                          absl::string_view what) {
  for (size_t i = 0; i < operand.size(); ++i) {
    if (!absl::ascii_isalpha(operand[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "equation ", QuotedInput(spec), ": ", what, " ", QuotedInput(operand), " has ",
          QuotedInput(operand.substr(i, 1)), "; use letters only (no ellipsis)"));
    }
    if (operand.find(operand[i], i + 1) != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "equation ", QuotedInput(spec), ": ", what, " ", QuotedInput(operand), " repeats ",
          QuotedInput(operand.substr(i, 1)), " (diagonals are not supported)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EinsumSpec> ParseEinsum(absl::string_view text) {
  std::string compact;
  for (char c : text) {
    if (!absl::ascii_isspace(c)) compact += c;
  }
  const size_t arrow = compact.find("->");
  if (arrow == std::string::npos || compact.find("->", arrow + 2) != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "equation ", QuotedInput(text), " needs exactly one '->', as in \"mk,kn->mn\""));
  }
  EinsumSpec spec;
  for (absl::string_view operand : absl::StrSplit(compact.substr(0, arrow), ',')) {
    if (operand.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("equation ", QuotedInput(text), " has an empty operand"));
    }
    absl::Status s = CheckLetters(text, operand, "operand");
    OFS_RETURN_IF_ERROR(s);
    spec.inputs.emplace_back(operand);
  }
  spec.output = compact.substr(arrow + 2);
  absl::Status s = CheckLetters(text, spec.output, "output");
  OFS_RETURN_IF_ERROR(s);
  for (char c : spec.output) {
    bool found = false;
    for (const std::string& in : spec.inputs) found = found || in.find(c) != std::string::npos;
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "equation ", QuotedInput(text), ": output letter ", QuotedInput(std::string(1, c)),
          " is in no operand"));
    }
  }
  return spec;
}

namespace {

// Letter -> extent, checked across operands.
absl::StatusOr<std::map<char, int64_t>> LetterExtents(const EinsumSpec& spec,
                                                      const std::vector<TensorDesc>& inputs) {
  if (inputs.size() != spec.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "einsum has ", spec.inputs.size(), " operands but the op got ", inputs.size(), " inputs"));
  }
  std::map<char, int64_t> extents;
  std::map<char, int> first_operand;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string& letters = spec.inputs[k];
    if (inputs[k].shape.rank() != static_cast<int>(letters.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "operand ", k, " '", letters, "' has ", letters.size(), " letters but input ",
          inputs[k].ToString(), " has rank ", inputs[k].shape.rank()));
    }
    for (size_t d = 0; d < letters.size(); ++d) {
      const int64_t e = inputs[k].shape.dim(static_cast<int>(d));
      auto [it, fresh] = extents.emplace(letters[d], e);
      if (fresh) {
        first_operand[letters[d]] = static_cast<int>(k);
      } else if (it->second != e) {
        return absl::InvalidArgumentError(absl::StrCat(
            "letter '", std::string(1, letters[d]), "' has extent ", it->second, " in operand ",
            first_operand[letters[d]], " but ", e, " in operand ", k, " ", inputs[k].ToString()));
      }
    }
  }
  return extents;
}

}  // namespace

absl::StatusOr<TensorDesc> EinsumOutputDesc(const EinsumSpec& spec,
                                            const std::vector<TensorDesc>& inputs) {
  absl::StatusOr<std::map<char, int64_t>> extents = LetterExtents(spec, inputs);
  OFS_RETURN_IF_ERROR(extents.status());
  for (size_t k = 1; k < inputs.size(); ++k) {
    absl::Status s = CheckSameDtype(inputs[0], "operand 0", inputs[k], absl::StrCat("operand ", k));
    OFS_RETURN_IF_ERROR(s);
  }
  std::vector<int64_t> dims;
  for (char c : spec.output) dims.push_back(extents->at(c));
  OFS_ASSIGN_OR_RETURN(Shape shape, MakeShape(dims, "einsum output"));
  return TensorDesc{shape, inputs[0].dtype};
}

absl::Status EinsumGetSbp(SbpContext& ctx, const EinsumSpec& spec) {
  return EinsumGetSbp(ctx, spec, EinsumBinding{});
}

absl::Status EinsumGetSbp(SbpContext& ctx, const EinsumSpec& spec, const EinsumBinding& binding) {
  const std::vector<OpArg>& ins = binding.operands.empty() ? ctx.inputs() : binding.operands;
  std::vector<TensorDesc> descs;
  for (const OpArg& a : ins) descs.push_back(ctx.input_desc(a.name, a.index));
  absl::StatusOr<std::map<char, int64_t>> extents = LetterExtents(spec, descs);
  OFS_RETURN_IF_ERROR(extents.status());
  std::vector<OpArg> outs = ctx.outputs();
  outs.insert(outs.end(), binding.follow_output.begin(), binding.follow_output.end());
  auto offers = [&](char c) {
    return extents->at(c) != 1 || binding.keep_unit_letters.find(c) != std::string::npos;
  };
  // One split of letter c: operands carrying it split there, others B.
  auto split_letter = [&](char c) {
    SbpSignatureBuilder b = ctx.NewBuilder();
    for (size_t k = 0; k < ins.size(); ++k) {
      const size_t pos = spec.inputs[k].find(c);
      if (pos == std::string::npos) {
        b.Broadcast(ins[k]);
      } else {
        b.Split(ins[k], static_cast<int>(pos));
      }
    }
    return b;
  };
  for (size_t o = 0; o < spec.output.size(); ++o) {
    if (!offers(spec.output[o])) continue;
    split_letter(spec.output[o]).Split(outs, static_cast<int>(o)).Build();
  }
  std::string contracted;
  for (const std::string& in : spec.inputs) {
    for (char c : in) {
      if (spec.output.find(c) == std::string::npos &&
          contracted.find(c) == std::string::npos) {
        contracted += c;
      }
    }
  }
  for (char c : contracted) {
    if (!offers(c)) continue;
    split_letter(c).PartialSum(outs).Build();
  }
  for (size_t k = 0; k < ins.size(); ++k) {
    SbpSignatureBuilder b = ctx.NewBuilder();
    for (size_t j = 0; j < ins.size(); ++j) {
      if (j == k) b.PartialSum(ins[j]);
      else b.Broadcast(ins[j]);
    }
    b.PartialSum(outs).Build();
  }
  return absl::OkStatus();
}

absl::StatusOr<OpDefBuilder> EinsumOp(const std::string& name, absl::string_view spec_text,
                                      std::vector<std::string> input_names,
                                      const std::string& output_name) {
  absl::StatusOr<EinsumSpec> spec = ParseEinsum(spec_text);
  if (!spec.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(UnquotedInput(name), ": ", spec.status().message()));
  }
  if (!input_names.empty() && input_names.size() != spec->inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        UnquotedInput(name), ": ", input_names.size(), " input names for ", spec->inputs.size(),
        " einsum operands"));
  }
  OpDefBuilder b(name);
  if (input_names.empty()) {
    b.VariadicInput("in");
  } else {
    for (const std::string& in : input_names) b.Input(in);
  }
  b.Output(output_name);
  b.Doc(absl::StrCat("einsum \"", spec_text, "\""));
  const EinsumSpec s = *spec;
  b.SetShapeFn([s, output_name](ShapeContext& ctx) {
    std::vector<TensorDesc> descs;
    for (const OpArg& a : ctx.op().inputs()) descs.push_back(ctx.input(a.name, a.index));
    OFS_ASSIGN_OR_RETURN(TensorDesc out, EinsumOutputDesc(s, descs));
    ctx.set_output(output_name, 0, out);
    return absl::OkStatus();
  });
  b.SetGetSbpFn([s](SbpContext& ctx) { return EinsumGetSbp(ctx, s); });
  return b;
}

}  // namespace oneflow_sbp::ops
