// A user's program: include the one header, describe a tensor, read it through a view.
#include <dmlref/dmlref.hpp>

#include <cstdio>

int main() {
  const std::uint32_t sizes[] = {1, 1, 2, 3};
  const auto bytes = dmlref::calc_buffer_tensor_size(dmlref::DataType::Float32, 4, sizes);
  float data[6] = {1, 2, 3, 4, 5, 6};
  const dmlref::TensorView<const float> view(data, {1, 1, 2, 3});
  std::printf("bytes=%llu element[0,0,1,2]=%g\n", static_cast<unsigned long long>(bytes),
              static_cast<double>(view.at({0, 0, 1, 2})));
  return (bytes == 24 && view.at({0, 0, 1, 2}) == 6.0f) ? 0 : 1;
}
