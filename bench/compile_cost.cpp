// Not a benchmark binary (bench/CMakeLists.txt builds bench_*.cpp only): the translation unit
// whose compile cost bench/README.md reports, one call of each runtime entry point, as a GPU test
// harness would make them. Measure it, and an include-only TU, with
//   /usr/bin/time -f '%U s %M KiB' g++ -std=c++20 -O2 -Iinclude -c bench/compile_cost.cpp -o cc.o
//   size cc.o; ls -l cc.o
//   printf '#include <dmlref/dmlref.hpp>\nint main(){}\n' > inc.cpp
//   /usr/bin/time -f '%U s %M KiB' g++ -std=c++20 -O2 -Iinclude -c inc.cpp -o inc.o
// Seconds vary from run to run on a shared machine; the compiler's instruction count does not.
// The largest `summary` line is cc1plus's (the others are the g++ driver and the assembler):
//   valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=cg.%p <a g++ line above>
//   grep -h '^summary' cg.* | sort -k2 -n | tail -n 1
#include <dmlref/dmlref.hpp>

void run_all(const dmlref::JoinOperatorDesc& j, std::span<const dmlref::ConstBuffer> ji,
             dmlref::Buffer jo, const dmlref::SplitOperatorDesc& s, dmlref::ConstBuffer si,
             std::span<const dmlref::Buffer> so, const dmlref::ScatterOperatorDesc& sc,
             dmlref::ConstBuffer a, dmlref::ConstBuffer b, dmlref::ConstBuffer c, dmlref::Buffer o,
             const dmlref::GatherNd1OperatorDesc& g,
             const dmlref::ReverseSubsequencesOperatorDesc& r) {
  dmlref::join(j, ji, jo);
  dmlref::split(s, si, so);
  dmlref::scatter(sc, a, b, c, o);
  dmlref::gather_nd1(g, a, b, o);
  dmlref::reverse_subsequences(r, a, b, o);
}

int main() {}
