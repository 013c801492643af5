#include "cli/program_capture.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "io/proto_io.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::cli {
namespace {

google::protobuf::Value ToValue(const AttrValue& v) {
  google::protobuf::Value out;
  switch (v.type()) {
    case AttrType::kInt: out.set_number_value(static_cast<double>(v.i())); break;
    case AttrType::kFloat: out.set_number_value(v.f()); break;
    case AttrType::kBool: out.set_bool_value(v.b()); break;
    case AttrType::kString: out.set_string_value(v.s()); break;
    case AttrType::kInts:
      for (int64_t x : v.ints()) out.mutable_list_value()->add_values()->set_number_value(static_cast<double>(x));
      if (v.ints().empty()) out.mutable_list_value();
      break;
  }
  return out;
}

}  // namespace

oneflow::ProgramProto RecordedProgramToProto(const eager::ProgramRecorder& recorder,
                                             bool mark_parameters, const std::string& output) {
  oneflow::ProgramProto p;
  p.set_placement(recorder.placement().ToString());
  for (const eager::ProgramRecorder::Tensor& t : recorder.tensors()) {
    if (t.produced) continue;
    oneflow::ProgramTensorProto* tp = p.add_tensors();
    tp->set_name(t.name);
    for (int64_t d : t.desc.shape.dims()) tp->add_shape(d);
    tp->set_dtype(std::string(DataTypeName(t.desc.dtype)));
    if (!t.parameter || mark_parameters) tp->set_nd_sbp(t.nd_sbp.ToString());
    if (t.parameter && mark_parameters) tp->set_parameter(true);
  }
  for (const eager::ProgramRecorder::Op& op : recorder.ops()) {
    oneflow::ProgramOpProto* o = p.add_ops();
    o->set_op(op.type);
    for (const std::string& in : op.inputs) o->add_inputs(in);
    for (const std::string& out : op.outputs) o->add_outputs(out);
    for (const auto& [name, value] : op.attrs.entries()) (*o->mutable_attrs())[name] = ToValue(value);
  }
  if (!output.empty()) p.add_outputs()->set_name(output);
  // The demo trains: `sbp plan` plans the whole step (forward, backward,
  // gradient reductions, Adam updates) with the loss as the output.
  p.set_training(true);
  return p;
}

absl::Status WriteProgram(const std::string& path, const oneflow::ProgramProto& program) {
  // Closed before the verdict: a full disk shows only at the flush.
  errno = 0;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f << io::ToJson(program, /*pretty=*/true) << "\n";
  if (f) f.close();
  if (!f) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write program file ", QuotedInput(path),
                                                   ": ",
                                                   errno != 0 ? std::strerror(errno) : "I/O error"));
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::cli
