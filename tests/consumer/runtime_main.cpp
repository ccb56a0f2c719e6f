// A program that calls dmlref's runtime entry points from two translation units (this one and
// runtime_join.cpp) and links dmlref::runtime, so the engine is compiled once, in dmlref::runtime's
// own unit, not in each caller (run_consumer.cmake builds it through find_package and
// add_subdirectory). Exits 1 unless both calls give DirectML's results.
#include <dmlref/dmlref.hpp>

#include <array>
#include <cstdio>

std::array<float, 5> join_rows(const std::array<float, 2>& a, const std::array<float, 3>& b);

int main() {
  const std::array<float, 5> joined = join_rows({1, 2}, {3, 4, 5});
  // REVERSE_SUBSEQUENCES of {1,5} along axis 1 with length 3: the first three reversed.
  const dmlref::TensorDesc data_desc(dmlref::DataType::Float32, {1, 5});
  const dmlref::TensorDesc lengths_desc(dmlref::DataType::UInt32, {1, 1});
  const dmlref::BufferTensorDesc data = data_desc.desc(), lengths = lengths_desc.desc();
  const std::uint32_t length = 3;
  std::array<float, 5> reversed{};
  dmlref::reverse_subsequences(
      dmlref::ReverseSubsequencesOperatorDesc{&data, &lengths, &data, 1},
      dmlref::ConstBuffer(joined.data(), sizeof joined), dmlref::ConstBuffer(&length, sizeof length),
      dmlref::Buffer(reversed.data(), sizeof reversed));
  const bool ok = joined == std::array<float, 5>{1, 2, 3, 4, 5} &&
                  reversed == std::array<float, 5>{3, 2, 1, 4, 5};
  std::printf("dmlref::runtime: JOIN %s, REVERSE_SUBSEQUENCES %s\n", ok ? "ok" : "wrong",
              ok ? "ok" : "wrong");
  return ok ? 0 : 1;
}
