// A program built on dmlref::runtime (run_consumer.cmake): DMLREF_EXTERN_RUNTIME, set by that
// target, makes this unit hold calls to the runtime entry points, not their bodies, which the
// target compiles once in its own unit. Built through find_package and run: exits 1 unless both
// calls give DirectML's results. Built as consumer_extern_only, without the instances: must fail
// to link. One calling unit keeps the test short; a harness of several gains as much per unit.
#include <dmlref/dmlref.hpp>

#include <array>
#include <cstdio>

#ifndef DMLREF_EXTERN_RUNTIME
#error "dmlref::runtime must give the units that link it DMLREF_EXTERN_RUNTIME"
#endif

int main() {
  using dmlref::DataType;
  // JOIN of {1,2} and {1,3} along axis 1: {1,5}.
  const dmlref::TensorDesc a(DataType::Float32, {1, 2}), b(DataType::Float32, {1, 3});
  const dmlref::TensorDesc row(DataType::Float32, {1, 5}), lengths(DataType::UInt32, {1, 1});
  const dmlref::BufferTensorDesc inputs[] = {a.desc(), b.desc()};
  const dmlref::BufferTensorDesc out = row.desc(), len = lengths.desc();
  const float a_values[] = {1, 2}, b_values[] = {3, 4, 5};
  std::array<float, 5> joined{};
  dmlref::join(dmlref::JoinOperatorDesc{2, inputs, &out, 1},
               {dmlref::ConstBuffer(a_values, sizeof a_values),
                dmlref::ConstBuffer(b_values, sizeof b_values)},
               dmlref::Buffer(joined.data(), sizeof joined));
  // REVERSE_SUBSEQUENCES of that row along axis 1 with length 3: the first three reversed.
  const std::uint32_t length = 3;
  std::array<float, 5> reversed{};
  dmlref::reverse_subsequences(dmlref::ReverseSubsequencesOperatorDesc{&out, &len, &out, 1},
                               dmlref::ConstBuffer(joined.data(), sizeof joined),
                               dmlref::ConstBuffer(&length, sizeof length),
                               dmlref::Buffer(reversed.data(), sizeof reversed));
  const bool ok = joined == std::array<float, 5>{1, 2, 3, 4, 5} &&
                  reversed == std::array<float, 5>{3, 2, 1, 4, 5};
  std::printf("dmlref::runtime: JOIN and REVERSE_SUBSEQUENCES %s\n", ok ? "ok" : "wrong");
  return ok ? 0 : 1;
}
