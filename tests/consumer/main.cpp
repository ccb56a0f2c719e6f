// A user's program: include the one header, describe a tensor, read it through a view. Built by
// find_package, add_subdirectory and pkg-config (run_consumer.cmake); each passes the version its
// build system reports as DMLREF_EXPECTED_VERSION, which must be the header's.
#include <dmlref/dmlref.hpp>

#include <cstdio>
#include <string_view>

int main() {
  const std::uint32_t sizes[] = {1, 1, 2, 3};
  const auto bytes = dmlref::calc_buffer_tensor_size(dmlref::DataType::Float32, 4, sizes);
  float data[6] = {1, 2, 3, 4, 5, 6};
  const dmlref::TensorView<const float> view(data, {1, 1, 2, 3});
  std::printf("dmlref %s (build system says %s): bytes=%llu element[0,0,1,2]=%g\n",
              DMLREF_VERSION_STRING, DMLREF_EXPECTED_VERSION,
              static_cast<unsigned long long>(bytes), static_cast<double>(view.at({0, 0, 1, 2})));
  const bool version_ok = std::string_view(DMLREF_VERSION_STRING) == DMLREF_EXPECTED_VERSION;
  return (version_ok && bytes == 24 && view.at({0, 0, 1, 2}) == 6.0f) ? 0 : 1;
}
