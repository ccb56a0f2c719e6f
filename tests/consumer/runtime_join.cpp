// One of consumer_runtime's two calling units (run_consumer.cmake). With dmlref::runtime linked
// (DMLREF_EXTERN_RUNTIME), this unit holds a call to the runtime JOIN, not JOIN's body: linked
// without dmlref::runtime's instances (consumer_extern_only), it must fail to link.
#include <dmlref/dmlref.hpp>

#include <array>

// JOIN of {1,2} and {1,3} along axis 1: {1,5}.
std::array<float, 5> join_rows(const std::array<float, 2>& a, const std::array<float, 3>& b) {
  const dmlref::TensorDesc a_desc(dmlref::DataType::Float32, {1, 2});
  const dmlref::TensorDesc b_desc(dmlref::DataType::Float32, {1, 3});
  const dmlref::TensorDesc out_desc(dmlref::DataType::Float32, {1, 5});
  const dmlref::BufferTensorDesc inputs[] = {a_desc.desc(), b_desc.desc()};
  const dmlref::BufferTensorDesc output = out_desc.desc();
  std::array<float, 5> out{};
  dmlref::join(dmlref::JoinOperatorDesc{2, inputs, &output, 1},
               {dmlref::ConstBuffer(a.data(), sizeof a), dmlref::ConstBuffer(b.data(), sizeof b)},
               dmlref::Buffer(out.data(), sizeof out));
  return out;
}
