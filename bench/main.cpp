// The main() of every dmlref benchmark binary (in place of Google Benchmark's benchmark_main): the
// same flags and output, except that the console shows memcpy_ratio as the plain ratio it is.
// Google Benchmark computes the counter as a rate (bench_baseline.hpp: set_bytes_processed) and
// its console marks every rate with "/s"; this reporter prints the value without it. JSON output
// (--benchmark_out=FILE --benchmark_out_format=json, or --benchmark_format=json) is unchanged.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <string_view>
#include <vector>

namespace {

class RatioConsoleReporter : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;

  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> shown = runs;
    for (Run& run : shown) {
      const auto it = run.counters.find("memcpy_ratio");
      if (it != run.counters.end()) it->second.flags = benchmark::Counter::kDefaults;
    }
    benchmark::ConsoleReporter::ReportRuns(shown);
  }
};

}  // namespace

int main(int argc, char** argv) {
  // The console options Google Benchmark would use (its own defaults: color on a terminal,
  // counters inline), read before Initialize consumes the flags.
  bool console = true, color = ::isatty(::fileno(stdout)) != 0, tabular = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--benchmark_format=")) console = arg == "--benchmark_format=console";
    if (arg.starts_with("--benchmark_color=")) {
      color = arg != "--benchmark_color=false" && arg != "--benchmark_color=0" &&
              arg != "--benchmark_color=no";
    }
    if (arg == "--benchmark_counters_tabular=true" || arg == "--benchmark_counters_tabular=1" ||
        arg == "--benchmark_counters_tabular") {
      tabular = true;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (console) {
    int options = benchmark::ConsoleReporter::OO_None;
    if (color) options |= benchmark::ConsoleReporter::OO_Color;
    if (tabular) options |= benchmark::ConsoleReporter::OO_Tabular;
    RatioConsoleReporter reporter(static_cast<benchmark::ConsoleReporter::OutputOptions>(options));
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}
