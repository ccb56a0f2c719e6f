// Validating a GPU result against the golden model, end to end, with a stand-in for the device:
//   1. fill the inputs with seeded distinct values (a misplaced element can never pass),
//   2. compute the golden output of JOIN,
//   3. "run on the device": here, a copy of the golden output with one element off by one ULP,
//   4. compare, and show the report that names the element, its coordinate and both values.
// A second device run that never happened (the output buffer still holds its sentinel) shows the
// skipped-dispatch note. Exits 0 when the reports catch exactly what was done to the results.
//
// With --write-npy DIR it also writes the inputs and the device's output as .npy files and prints
// the dmlref-check command that checks them from a shell (examples/check_with_tool.sh runs it).
#include <dmlref/dmlref.hpp>
#include <dmlref/compare.hpp>
#include <dmlref/fill.hpp>
#include <dmlref/npy.hpp>
#include <dmlref/ops/join.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

int main(int argc, char** argv) {
  using namespace dmlref;
  std::string npy_dir;
  if (argc == 3 && std::string_view(argv[1]) == "--write-npy") {
    npy_dir = argv[2];
  } else if (argc != 1) {
    std::cerr << "usage: " << argv[0] << " [--write-npy DIR]\n";
    return 2;
  }

  // JOIN along axis 1: FLOAT16 {2,3,4} and {2,5,4} -> {2,8,4}.
  constexpr std::uint32_t kAxis = 1;
  NpyArray a(DataType::Float16, {2, 3, 4});
  NpyArray b(DataType::Float16, {2, 5, 4});
  // One seed, consecutive ranges: distinct within and across the inputs.
  constexpr std::uint64_t kSeed = 2024;
  fill_distinct(a.view<float16>(), kSeed);
  fill_distinct(b.view<float16>(), kSeed, a.element_count());

  const auto out_sizes = infer_join_output_sizes({a.sizes(), b.sizes()}, kAxis);
  NpyArray golden(DataType::Float16, out_sizes);
  join<float16>({a.view<float16>(), b.view<float16>()}, golden.view<float16>(), kAxis);

  // The stand-in device result: the golden output with the last mantissa bit of one element
  // flipped, the kind of error that looks right when printed with few digits.
  NpyArray device = golden;
  const Coord corrupted{1, 6, 2};
  float16& victim = device.view<float16>()[corrupted];
  victim = float16::from_bits(static_cast<std::uint16_t>(victim.bits() ^ 1u));

  CompareOptions options;
  options.name = "OutputTensor";
  const CompareResult report = compare(golden.view<float16>(), device.view<float16>(), options);
  std::cout << "--- device result with one corrupted element\n" << report << "\n";
  const bool caught = report.mismatch_count == 1 && report.mismatches.size() == 1 &&
                      report.mismatches[0].coordinate == corrupted;

  // A dispatch that never ran: the read-back buffer still holds the sentinel written before it.
  NpyArray untouched(DataType::Float16, out_sizes);
  fill_constant(untouched.view<float16>(), float16::from_bits(0xFFFF));
  options.max_report = 3;  // every element differs; a few make the point
  const CompareResult skipped = compare(golden.view<float16>(), untouched.view<float16>(),
                                        untouched.view<float16>(), options);
  std::cout << "--- device result of a skipped dispatch\n" << skipped << "\n";
  const bool flagged = skipped.actual_untouched && skipped.mismatch_count == golden.element_count();

  if (!npy_dir.empty()) {
    write_npy(npy_dir + "/a.npy", a);
    write_npy(npy_dir + "/b.npy", b);
    write_npy(npy_dir + "/device.npy", device);
    write_npy(npy_dir + "/untouched.npy", untouched);
    std::cout << "--- wrote a.npy, b.npy, device.npy, untouched.npy to " << npy_dir
              << "; check the device's output from a shell with\n"
              << "dmlref-check join --axis " << kAxis << " --input " << npy_dir << "/a.npy --input "
              << npy_dir << "/b.npy --actual " << npy_dir << "/device.npy\n";
  } else {
    std::cout << "(run with --write-npy DIR to write .npy files for dmlref-check)\n";
  }

  if (!caught || !flagged) {
    std::cerr << "the reports did not catch exactly the corrupted element and the skipped "
                 "dispatch\n";
    return 1;
  }
  std::cout << "caught: the corrupted element at " << report.mismatches[0].coordinate_string()
            << " and the skipped dispatch\n";
  return 0;
}
