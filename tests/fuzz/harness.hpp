// The harness registry (harness_registry.cpp), as the operator harnesses and each executable's
// entry points (harness_main.cpp) see it. Declarations only: harness_main.cpp is compiled once per
// executable, and includes nothing else, so it costs a moment instead of the engine's templates.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dmlref::fuzz {

struct Outcome;  // fuzz_input.hpp

// Decodes one input into a call and checks it (fuzz_<op>.cpp: run_<op>).
using RunFn = Outcome (*)(const std::uint8_t*, std::size_t);

// Adds `run` under its operator's name during static initialization (DMLREF_FUZZ_HARNESS);
// returns true, for the namespace-scope constant it initializes.
bool register_harness(const char* op, RunFn run);

// LLVMFuzzerInitialize: makes `op`'s harness the one this process runs, prints its stats at exit,
// and with DMLREF_FUZZ_MAKE_SEEDS writes its seeds and exits. No harness of that name: a message
// and exit status 1, rather than a fuzzer that checks nothing.
void select_harness(const char* op);

// LLVMFuzzerTestOneInput: decodes and checks one input with the selected harness.
void execute_selected(const std::uint8_t* data, std::size_t size);

}  // namespace dmlref::fuzz
