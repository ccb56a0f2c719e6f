// The harness registry and what libFuzzer's entry points do with the selected harness: the seed
// generator, the seed check, the stats at exit. Compiled once, in the object library with every
// operator's harness (tests/fuzz/CMakeLists.txt), not once per executable.
#include "harness.hpp"

#include "fuzz_input.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

// This file's own names: the harnesses compile as one translation unit (CMakeLists.txt).
namespace harness_registry {

using namespace dmlref::fuzz;

namespace {

struct Registered {
  const char* op;
  RunFn run;
};
// A function-local static: the harnesses register during static initialization, in any order.
std::vector<Registered>& registered() {
  static std::vector<Registered> harnesses;
  return harnesses;
}
RunFn selected = nullptr;

// DMLREF_FUZZ_MAKE_SEEDS=<dir> [DMLREF_FUZZ_SEED_COUNT=n]: writes n short inputs that decode into
// accepted, untainted calls of different kinds (a fixed pseudo-random search, so the same harness
// writes the same files), then exits.
void make_seeds(RunFn run, const char* dir) {
  const char* count_env = std::getenv("DMLREF_FUZZ_SEED_COUNT");
  const std::size_t want = count_env ? std::strtoull(count_env, nullptr, 10) : 8;
  std::mt19937_64 rng(0x5EED);
  std::vector<std::uint64_t> seen;
  std::size_t written = 0;
  for (std::uint64_t attempt = 0; written < want && attempt < 2000000; ++attempt) {
    // Short inputs of mostly small bytes: the common choices, with some variety in the rest.
    std::vector<std::uint8_t> bytes(24 + attempt % 73);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng() % 4 == 0 ? rng() : rng() % 64);
    const Outcome o = run(bytes.data(), bytes.size());
    if (!o.valid || std::find(seen.begin(), seen.end(), o.signature) != seen.end()) continue;
    seen.push_back(o.signature);
    char path[4096];
    std::snprintf(path, sizeof path, "%s/seed_%02zu", dir, written++);
    FILE* f = std::fopen(path, "wb");
    if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      std::fprintf(stderr, "cannot write %s\n", path);
      std::exit(1);
    }
    std::fclose(f);
  }
  std::fprintf(stderr, "dmlref fuzz %s: wrote %zu seeds to %s\n", stats().op, written, dir);
  std::exit(written == want ? 0 : 1);
}

}  // namespace

}  // namespace harness_registry

namespace dmlref::fuzz {

bool register_harness(const char* op, RunFn run) {
  using namespace harness_registry;
  for (const Registered& h : registered()) {
    if (std::strcmp(h.op, op) == 0) {
      std::fprintf(stderr, "dmlref fuzz: two harnesses registered for %s\n", op);
      std::abort();
    }
  }
  registered().push_back({op, run});
  return true;
}

void select_harness(const char* op) {
  using namespace harness_registry;
  for (const Registered& h : registered()) {
    if (std::strcmp(h.op, op) != 0) continue;
    selected = h.run;
    stats().op = h.op;
    std::atexit(print_stats);
    if (const char* dir = std::getenv("DMLREF_FUZZ_MAKE_SEEDS")) make_seeds(h.run, dir);
    return;
  }
  std::fprintf(stderr, "dmlref fuzz: no harness for operator %s; registered:", op);
  for (const Registered& h : registered()) std::fprintf(stderr, " %s", h.op);
  std::fprintf(stderr, "\n");
  std::exit(1);
}

// With the seed check (DMLREF_FUZZ_EXPECT_VALID) a rejected call is a defect.
void execute_selected(const std::uint8_t* data, std::size_t size) {
  const Outcome o = harness_registry::selected(data, size);
  if (expect_valid() && !o.valid)
    defect("DMLREF_FUZZ_EXPECT_VALID: this input decodes into a rejected call");
}

}  // namespace dmlref::fuzz
