// libFuzzer harness for the .npy reader. Each input is a whole file image. Checks:
//  - read_npy on the bytes either returns or raises dmlref::Error (anything else, a crash or a
//    sanitizer report is a defect);
//  - the stream reader (NpyArray::from_stream, what read_npy(path) uses) agrees with it exactly,
//    with the size known (a regular file) and unknown (a pipe): the same array or the same error;
//  - a message quotes no raw byte of the file: every character is printable ASCII;
//  - an accepted image round-trips: written again in its own version it parses to the same type,
//    sizes, order and data bytes, and read from the stream it reads no byte past its data.
// DMLREF_FUZZ_EXPECT_VALID=1: every input must be accepted (the seed check of CTest).
// DMLREF_FUZZ_MAKE_SEEDS=dir: write the seed corpus (valid images of every type) there and exit.
#include <dmlref/npy.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace dmlref;

struct Stats {
  unsigned long long runs = 0, accepted = 0;
};
Stats& stats() {
  static Stats s;
  return s;
}

void print_stats() {
  if (std::getenv("DMLREF_FUZZ_EXPECT_VALID") != nullptr) return;
  std::fprintf(stderr, "dmlref fuzz NPY: %llu calls, %llu accepted (%.1f%%)\n", stats().runs,
               stats().accepted,
               stats().runs ? 100.0 * double(stats().accepted) / double(stats().runs) : 0.0);
}

[[noreturn]] void defect(const std::string& what) {
  std::fprintf(stderr, "dmlref fuzz defect: %s\n", what.c_str());
  std::abort();
}

// The outcome of one read: the array's parts, or the error.
struct Outcome {
  bool ok = false;
  std::string error;  // what()
  DataType type = DataType::Unknown;
  std::vector<std::uint32_t> sizes;
  bool fortran_order = false;
  NpyVersion version = NpyVersion::k1_0;
  std::vector<std::byte> data;

  bool operator==(const Outcome&) const = default;
};

template <class Read>
Outcome outcome_of(Read read) {
  Outcome o;
  try {
    const NpyArray a = read();
    o.ok = true;
    o.type = a.data_type();
    o.sizes = a.sizes();
    o.fortran_order = a.fortran_order();
    o.version = a.version();
    o.data.assign(a.bytes().begin(), a.bytes().end());
  } catch (const Error& e) {
    o.error = e.what();
    for (char c : o.error) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7F) defect("a message holds a raw byte: " + o.error);
    }
  }
  return o;
}

void write_seeds(const char* dir) {
  int n = 0;
  const auto save = [&](const NpyArray& a, NpyVersion v) {
    const std::vector<std::byte> image = npy_bytes(a, v);
    std::ofstream out(std::string(dir) + "/seed" + std::to_string(n++) + ".npy", std::ios::binary);
    out.write(reinterpret_cast<const char*>(image.data()),
              static_cast<std::streamsize>(image.size()));
  };
  for (DataType t : kAllDataTypes) {
    NpyArray a(t, {2, 3});
    for (std::size_t i = 0; i < a.bytes().size(); ++i) a.bytes()[i] = std::byte(i * 37 + 1);
    save(a, NpyVersion::k1_0);
  }
  save(NpyArray(DataType::Float32, {3, 1, 2}, true), NpyVersion::k2_0);
  save(NpyArray(DataType::UInt8, {1, 1, 1, 1, 1, 1, 1, 2}), NpyVersion::k3_0);
  save(NpyArray(DataType::Int16, {5}), NpyVersion::k1_0);
  std::exit(0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("DMLREF_FUZZ_MAKE_SEEDS")) write_seeds(dir);
  std::atexit(print_stats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  ++stats().runs;
  const std::span<const std::byte> image(reinterpret_cast<const std::byte*>(bytes), size);
  const Outcome from_bytes = outcome_of([&] { return read_npy(image, "f.npy"); });
  const std::string text(reinterpret_cast<const char*>(bytes), size);
  std::istringstream sized(text), unsized(text);
  const Outcome from_file =
      outcome_of([&] { return NpyArray::from_stream(sized, "f.npy", std::uint64_t{size}); });
  if (!(from_file == from_bytes)) {
    defect("the stream reader (size known) disagrees: '" + from_file.error + "' vs '" +
           from_bytes.error + "'");
  }
  // Unknown size: the same verdict, though a longer-than-described stream is worded differently.
  const Outcome from_pipe =
      outcome_of([&] { return NpyArray::from_stream(unsized, "f.npy", std::nullopt); });
  if (from_pipe.ok != from_bytes.ok || (from_pipe.ok && !(from_pipe == from_bytes))) {
    defect("the stream reader (size unknown) disagrees: '" + from_pipe.error + "' vs '" +
           from_bytes.error + "'");
  }
  if (!from_bytes.ok) {
    if (std::getenv("DMLREF_FUZZ_EXPECT_VALID") != nullptr) {
      defect("seed rejected: " + from_bytes.error);
    }
    return 0;
  }
  ++stats().accepted;
  const NpyArray a = read_npy(image, "f.npy");
  const NpyHeader h = parse_npy_header(image, "f.npy");
  if (h.data_offset + h.data_bytes != size) defect("accepted an image whose size disagrees");
  const std::vector<std::byte> again = npy_bytes(a, a.version());
  const Outcome round_trip = outcome_of([&] { return read_npy(again, "f.npy"); });
  if (!(round_trip == from_bytes)) defect("an accepted image does not survive a round trip");
  return 0;
}
