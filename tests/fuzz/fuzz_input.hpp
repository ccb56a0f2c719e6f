// The shared half of the libFuzzer harnesses (tests/fuzz/fuzz_<op>.cpp): decoding bytes into
// DirectML-shaped operator calls, and the checks every harness applies to the result.
//
// Decoding. A Reader hands out bytes; past the end it yields zeros, and every decision maps byte 0
// to the common, valid choice, so a short input (and every seed in corpus/<op>/) decodes into a
// call the operator accepts, while libFuzzer's mutations reach the rarer, hostile choices: zero
// and huge sizes, interleaving and huge strides, wrong TotalTensorSizeInBytes, buffers a byte
// short or misaligned, aliasing, extreme index values, other data types and feature levels. Every
// hostile choice taints the input; an untainted call must be accepted, so over-strict validation
// is a defect as much as a missed rule. Buffer contents come from a generator seeded by the whole
// input, so they cost no fuzz bytes; index values have a decoded mode plus a few decoded pokes.
//
// Memory. Every buffer is its own exact-size heap block (aligned to 256), so AddressSanitizer
// reports a single byte read or written past it; Sizes and Strides arrays are exact-size too.
// The blocks form a World; aliasing binds two tensors into one block.
//
// Checks (check_call): the runtime entry point either raises dmlref::Error or returns.
//  - On Error: every byte of every block is unchanged (the canary property), validate_<op> with
//    the same buffers raises the same code, and the description-only validate_<op> raises it
//    too or passes (then the code must be one that needs the buffers).
//  - On success: both validate_<op> overloads pass; an independent check of the tensor rules
//    (T1-T4, T8-T13, indices in range) holds; the typed dmlref::reference::<op> on views built
//    from the validated descriptions, run on a twin World copied before the call, leaves every
//    block bytewise equal to the runtime's; and so does a model of the spec written here without
//    the library's layouts or loops.
// Anything else (another exception, a crash, a sanitizer report, a mismatch) aborts: a defect.
//
// Build. The operator harnesses compile as one translation unit (tests/fuzz/CMakeLists.txt), so
// this header and the engine instantiations they share are compiled once, not once per harness:
// each file keeps its names in a namespace named after it and registers its `run` with
// DMLREF_FUZZ_HARNESS; each operator's executable links them all and its entry points
// (harness_main.cpp) select its own by name (harness_registry.cpp, which also holds the seed
// generator and the seed check).
#pragma once

#include <dmlref/dmlref.hpp>

#include "harness.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

// The harness's own element loops (the model, the independent rule checks, buffer fills and
// comparisons) are left out of the coverage instrumentation: their coverage says nothing about the
// library, and tracing their comparisons would dominate the time of every run.
#define DMLREF_FUZZ_UNTRACED __attribute__((no_sanitize("coverage")))

namespace dmlref::fuzz {

// ---- defects ------------------------------------------------------------------------------------

// Describes the call being checked, for the defect report (set by check_call; built only when a
// defect is reported, so the common path formats no strings).
inline const std::function<std::string()>*& current_call() {
  static const std::function<std::string()>* describe = nullptr;
  return describe;
}

// Any exception other than dmlref::Error, or a mismatch, is a defect: crash loudly for libFuzzer.
[[noreturn]] inline void defect(const std::string& what) {
  const std::string call = current_call() != nullptr ? (*current_call())() : std::string();
  std::fprintf(stderr, "\ndmlref fuzz defect: %s\n%s\n", what.c_str(), call.c_str());
  std::fflush(stderr);
  std::abort();
}

// ---- the byte reader ----------------------------------------------------------------------------

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | (u8() << 8)); }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(u8()) << (8 * i);
    return v;
  }
  std::uint64_t u64() { return u32() | (static_cast<std::uint64_t>(u32()) << 32); }

  // True with probability n/256 on random bytes, false on a zero byte: the hostile branch.
  bool odds(unsigned n) { return u8() >= 256 - n; }

  // Marks the call as possibly invalid: it may be rejected without that being a defect.
  void taint() { tainted_ = true; }
  bool tainted() const { return tainted_; }

  // A dimension size: mostly 1-4, sometimes up to 16, now and then 0 or an extreme (T3, T4, T10).
  std::uint32_t size_like() {
    const std::uint8_t b = u8();
    if (b < 232) return 1 + b % 4;
    if (b < 244) return 5 + b % 12;
    taint();
    if (b < 249) return 0;
    return extreme_u32();
  }
  // Where 32-bit arithmetic breaks: 2^32 - 1, 2^31, 65535 * 65537 = 2^32 - 1, ...
  std::uint32_t extreme_u32() {
    static constexpr std::uint32_t kValues[] = {0xFFFFFFFFu, 0xFFFFFFFEu, 0x80000000u, 0x7FFFFFFFu,
                                                65535u,      65536u,      65537u,      0x10001u,
                                                0x40000001u, 1u << 20};
    const std::uint8_t b = u8();
    return b < 200 ? kValues[b % std::size(kValues)] : u32();
  }
  // A DimensionCount: mostly 1-4, sometimes up to 8; 0, 9 or worse is hostile (T2).
  std::uint32_t rank() {
    const std::uint8_t b = u8();
    if (b < 200) return 1 + b % 4;
    if (b < 250) return 1 + b % 8;
    taint();
    return b < 253 ? 0u : 9u + (b & 1u) * 100u;
  }
  DataType data_type() { return kAllDataTypes[u8() % std::size(kAllDataTypes)]; }
  // The required type, now and then another one (maybe not a DataType at all: T1).
  DataType maybe_other_type(DataType type) {
    if (!odds(5)) return type;
    taint();
    const std::uint8_t b = u8();
    return b < 250 ? static_cast<DataType>(b % 13) : static_cast<DataType>(0x7FFFFFFFu);
  }
  FeatureLevel feature_level() {
    if (!odds(16)) return kLatestFeatureLevel;
    taint();  // older levels narrow the tables
    static constexpr FeatureLevel kLevels[] = {
        FeatureLevel::k1_0, FeatureLevel::k2_0, FeatureLevel::k2_1,
        FeatureLevel::k3_0, FeatureLevel::k3_1, FeatureLevel::k4_0,
        FeatureLevel::k4_1, FeatureLevel::k5_0, FeatureLevel::k6_4};
    const std::uint8_t b = u8();
    return b < 240 ? kLevels[b % std::size(kLevels)] : static_cast<FeatureLevel>(u32());
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  bool tainted_ = false;
};

// Buffer contents: splitmix64, seeded by the whole input.
struct SplitMix {
  std::uint64_t state;
  DMLREF_FUZZ_UNTRACED std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};
DMLREF_FUZZ_UNTRACED inline void fill_bytes(std::uint8_t* p, std::uint64_t bytes, SplitMix& fill) {
  for (std::uint64_t i = 0; i < bytes; i += 8) {
    const std::uint64_t v = fill.next();
    std::memcpy(p + i, &v, static_cast<std::size_t>(std::min<std::uint64_t>(8, bytes - i)));
  }
}
DMLREF_FUZZ_UNTRACED inline std::uint64_t hash_bytes(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001B3ull;
  return h;
}

// ---- memory -------------------------------------------------------------------------------------

// Caps the bytes one buffer may take, so a description that asks for gigabytes gets a small
// buffer (a T10 error) instead of exhausting memory.
inline constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{1} << 18;
inline constexpr std::size_t kBlockAlignment = 256;

class World {
 public:
  World() = default;
  World(World&&) = default;
  World& operator=(World&&) = default;

  std::size_t add(std::size_t bytes) {
    void* p = nullptr;
    if (posix_memalign(&p, kBlockAlignment, bytes == 0 ? 1 : bytes) != 0) defect("out of memory");
    blocks_.push_back({Mem(static_cast<std::uint8_t*>(p)), bytes});
    return blocks_.size() - 1;
  }
  std::uint8_t* data(std::size_t block) const { return blocks_[block].mem.get(); }
  std::size_t size(std::size_t block) const { return blocks_[block].size; }
  std::size_t count() const { return blocks_.size(); }

  // Same sizes, same alignment, same bytes.
  DMLREF_FUZZ_UNTRACED World clone() const {
    World w;
    for (const Block& b : blocks_) {
      const std::size_t i = w.add(b.size);
      if (b.size != 0) std::memcpy(w.data(i), b.mem.get(), b.size);
    }
    return w;
  }
  // "" when every block holds the same bytes as in `other`, else where the first difference is.
  DMLREF_FUZZ_UNTRACED std::string difference(const World& other) const {
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const std::uint8_t* a = data(i);
      const std::uint8_t* b = other.data(i);
      if (blocks_[i].size == 0 || std::memcmp(a, b, blocks_[i].size) == 0) continue;
      std::size_t k = 0;
      while (a[k] == b[k]) ++k;
      char buf[160];
      std::snprintf(buf, sizeof buf, "block %zu (%zu bytes) byte %zu is 0x%02x, expected 0x%02x", i,
                    blocks_[i].size, k, a[k], b[k]);
      return buf;
    }
    return "";
  }

 private:
  struct Free {
    void operator()(std::uint8_t* p) const noexcept { std::free(p); }
  };
  using Mem = std::unique_ptr<std::uint8_t, Free>;
  struct Block {
    Mem mem;
    std::size_t size;
  };
  std::vector<Block> blocks_;
};

// Where a tensor's buffer lives: `size` bytes at `offset` into a block (null when block < 0).
struct Binding {
  int block = -1;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;

  void* ptr(const World& w) const {
    return block < 0 ? nullptr
                     : static_cast<void*>(w.data(static_cast<std::size_t>(block)) + offset);
  }
  ConstBuffer cbuf(const World& w) const { return {ptr(w), size}; }
  Buffer buf(const World& w) const { return {ptr(w), size}; }
};

// One tensor of a call: its description (Sizes/Strides in exact-size arrays) and binding.
struct FuzzTensor {
  std::string name;  // DirectML's: "InputTensors[1]"
  bool is_output = false;
  std::vector<std::uint32_t> sizes;
  std::vector<std::uint32_t> strides;  // used when has_strides
  bool has_strides = false;
  BufferTensorDesc desc;
  Binding binding;

  // Points desc at the arrays; call after every change and after a copy.
  void sync() {
    desc.DimensionCount = static_cast<std::uint32_t>(sizes.size());
    desc.Sizes = sizes.empty() ? nullptr : sizes.data();
    desc.Strides = has_strides && !strides.empty() ? strides.data() : nullptr;
  }
  std::string describe() const {
    std::string s = name + ": " + dmlref::describe(desc.DataType) + " Sizes {";
    for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
    s += "}";
    if (has_strides) {
      s += " Strides {";
      for (std::size_t i = 0; i < strides.size(); ++i) {
        s += (i ? "," : "") + std::to_string(strides[i]);
      }
      s += "}";
    }
    s += " Total " + std::to_string(desc.TotalTensorSizeInBytes) + " Align " +
         std::to_string(desc.GuaranteedBaseOffsetAlignment) + " Flags " +
         std::to_string(static_cast<std::uint32_t>(desc.Flags)) + " | block " +
         std::to_string(binding.block) + " offset " + std::to_string(binding.offset) + " bytes " +
         std::to_string(binding.size);
    return s;
  }
};

// The typed layer's Layout of a (validated) description: what the typed reference's views use.
inline Layout layout_of(const FuzzTensor& t) {
  const std::span<const std::uint32_t> sizes(t.sizes);
  if (!t.has_strides) return Layout::packed(sizes);
  const std::vector<std::int64_t> strides(t.strides.begin(), t.strides.end());
  return Layout::strided(sizes, std::span<const std::int64_t>(strides));
}

// IndexPolicy as decoded: mostly Error, sometimes Clamp, rarely a value that is neither.
inline IndexPolicy decode_index_policy(Reader& in) {
  const std::uint8_t b = in.u8();
  if (b < 200) return IndexPolicy::Error;
  if (b < 252) return IndexPolicy::Clamp;
  in.taint();
  return static_cast<IndexPolicy>(2 + b % 4);  // InvalidOption
}

// ---- decoding one tensor ------------------------------------------------------------------------

inline std::uint32_t saturate32(std::uint64_t v) {
  return v > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<std::uint32_t>(v);
}

// Strides: mostly none (packed); else packed, padded, transposed, broadcast (0), small arbitrary
// ones (which may interleave or repeat), or one extreme stride.
inline void decode_strides(Reader& in, FuzzTensor& t) {
  const std::size_t rank = t.sizes.size();
  const std::uint8_t kind = in.u8();
  t.has_strides = false;
  t.strides.clear();
  if (kind < 140 || rank == 0) return;
  t.has_strides = true;
  t.strides.assign(rank, 0);
  std::vector<std::size_t> order(rank);  // order[rank-1] is the fastest dimension
  for (std::size_t i = 0; i < rank; ++i) order[i] = i;
  if (kind >= 175 && kind < 200) {
    for (std::size_t i = rank; i-- > 1;) std::swap(order[i], order[in.u8() % (i + 1)]);
  }
  std::uint64_t acc = 1;
  for (std::size_t k = rank; k-- > 0;) {
    const std::size_t d = order[k];
    t.strides[d] = saturate32(acc);
    if (acc > 0xFFFFFFFFu) in.taint();
    const std::uint64_t pad = (kind >= 160 && kind < 175) ? in.u8() % 4 : 0;
    acc = std::min<std::uint64_t>(acc * std::max<std::uint32_t>(t.sizes[d], 1) + pad,
                                  std::uint64_t{1} << 40);
  }
  if (kind >= 200 && kind < 220) {  // broadcast: fine for inputs (T7), T12 for outputs
    for (std::size_t d = 0; d < rank; ++d) {
      if (in.u8() & 1) {
        t.strides[d] = 0;
        if (t.is_output && t.sizes[d] > 1) in.taint();
      }
    }
  } else if (kind >= 220 && kind < 240) {  // arbitrary small strides
    // On a large output these cost the library's exact T12 check (sorting every offset) three
    // validations a run: keep that to one large output in eight, so runs stay fast.
    std::uint64_t count = 1;
    for (std::uint32_t s : t.sizes)
      count = std::min<std::uint64_t>(count * s, std::uint64_t{1} << 32);
    if (t.is_output && count > (std::uint64_t{1} << 14) && (in.u8() & 7) != 0) return;
    for (std::size_t d = 0; d < rank; ++d) t.strides[d] = in.u8() % 9;
    if (t.is_output) in.taint();
  } else if (kind >= 240) {  // one extreme stride: reach overflow (T8) or a huge buffer (T10)
    t.strides[in.u8() % rank] = in.extreme_u32();
    in.taint();
  }
}

// Everything about a tensor except its sizes and type: strides, flags, alignment, the total size,
// and a fresh block holding its buffer, filled from `fill`.
inline void decode_tensor(Reader& in, World& world, SplitMix& fill, FuzzTensor& t, DataType type,
                          std::vector<std::uint32_t> sizes) {
  t.sizes = std::move(sizes);
  t.desc = BufferTensorDesc{};
  t.desc.DataType = type;
  decode_strides(in, t);
  t.sync();

  const std::uint8_t flags = in.u8();
  if (flags < 230) {
    t.desc.Flags = TensorFlags::None;
  } else if (flags < 245 && !t.is_output) {
    t.desc.Flags = TensorFlags::OwnedByDml;  // inputs only (T11)
  } else {
    in.taint();
    t.desc.Flags = static_cast<TensorFlags>(1 + flags % 3);
  }

  const std::size_t eb = element_size(type);
  const std::uint8_t align = in.u8();
  if (align < 230) {
    t.desc.GuaranteedBaseOffsetAlignment = 0;
  } else if (align < 243 && eb != 0) {
    t.desc.GuaranteedBaseOffsetAlignment = static_cast<std::uint32_t>(eb << (align % 4));
  } else {
    in.taint();
    static constexpr std::uint32_t kOdd[] = {1, 2, 3, 4, 6, 12, 512, 0x80000000u, 0xFFFFFFFFu};
    t.desc.GuaranteedBaseOffsetAlignment = kOdd[in.u8() % std::size(kOdd)];
  }

  // TotalTensorSizeInBytes: the minimum (T8), sometimes more, sometimes less or arbitrary.
  std::optional<std::uint64_t> minimum;
  try {
    minimum = calc_buffer_tensor_size(type, t.desc.DimensionCount, t.desc.Sizes, t.desc.Strides);
  } catch (const Error&) {
    in.taint();
  }
  const std::uint8_t total = in.u8();
  if (minimum && total < 225) {
    t.desc.TotalTensorSizeInBytes = *minimum;
  } else if (minimum && total < 240) {
    t.desc.TotalTensorSizeInBytes = *minimum + 4 * (in.u8() % 8);
  } else {
    in.taint();
    const std::uint64_t base = minimum.value_or(in.u16());
    switch (in.u8() % 4) {
      case 0:
        t.desc.TotalTensorSizeInBytes = base - std::min<std::uint64_t>(base, 1);
        break;
      case 1:
        t.desc.TotalTensorSizeInBytes = base - std::min<std::uint64_t>(base, 4);
        break;
      case 2:
        t.desc.TotalTensorSizeInBytes = in.u64();
        break;
      default:
        t.desc.TotalTensorSizeInBytes = base + 1 + in.u8();
        break;
    }
  }

  // The buffer: the description's size, sometimes a byte short or larger, sometimes misaligned or
  // missing; never more than kMaxBufferBytes.
  std::uint64_t bytes = t.desc.TotalTensorSizeInBytes;
  const std::uint8_t size_kind = in.u8();
  if (size_kind >= 235 && size_kind < 245) {
    in.taint();
    bytes -= std::min<std::uint64_t>(bytes, 1);  // T10
  } else if (size_kind >= 245) {
    bytes += in.u8();
  }
  if (bytes > kMaxBufferBytes) {
    in.taint();
    bytes = kMaxBufferBytes;
  }
  std::uint64_t shift = 0;
  if (in.odds(8)) {
    in.taint();
    shift = in.u8() % 9;  // 1, 2, 4 break element or promised alignment (T9); 0 and 8 may not
  }
  const std::size_t block = world.add(static_cast<std::size_t>(bytes + shift));
  fill_bytes(world.data(block), bytes + shift, fill);
  t.binding = {static_cast<int>(block), shift, bytes};
  if (in.odds(2)) {
    in.taint();
    t.binding.block = -1;  // a null buffer
  }
}

// Rebinds `to` into `from`'s block: the same bytes (offset 0), just past `from`'s buffer, or
// anywhere inside it. Whether that overlaps is for T13 to say.
inline void alias(Reader& in, const World& world, const FuzzTensor& from, FuzzTensor& to) {
  if (from.binding.block < 0) return;
  const std::size_t block_size = world.size(static_cast<std::size_t>(from.binding.block));
  std::uint64_t offset = from.binding.offset;
  switch (in.u8() % 3) {
    case 0:
      break;
    case 1:
      offset += from.binding.size;
      break;
    default:
      offset = in.u16() % (block_size + 1);
      break;
  }
  offset = std::min<std::uint64_t>(offset, block_size);
  to.binding.block = from.binding.block;
  to.binding.offset = offset;
  to.binding.size = std::min<std::uint64_t>(to.binding.size, block_size - offset);
}

// Binds two input tensors into one fresh block that holds both buffers (inputs may overlap each
// other: T13 concerns outputs only), so each reads bytes of the other. Offsets (and so alignment)
// stay as decoded.
inline void share_block(World& world, SplitMix& fill, FuzzTensor& a, FuzzTensor& b) {
  if (a.binding.block < 0 || b.binding.block < 0) return;
  const std::uint64_t bytes =
      std::max(a.binding.offset + a.binding.size, b.binding.offset + b.binding.size);
  const std::size_t block = world.add(static_cast<std::size_t>(bytes));
  fill_bytes(world.data(block), bytes, fill);
  a.binding.block = b.binding.block = static_cast<int>(block);
}

// Now and then breaks a shape that an operator's rules tie to another one: one size changed, or a
// dimension dropped or added.
inline void perturb_sizes(Reader& in, std::vector<std::uint32_t>& sizes) {
  if (!in.odds(5)) return;
  in.taint();
  switch (in.u8() % 4) {
    case 0:
    case 1:
      if (!sizes.empty()) {
        std::uint32_t& s = sizes[in.u8() % sizes.size()];
        s = in.odds(128) ? s + 1 : in.size_like();
      }
      break;
    case 2:
      if (!sizes.empty()) sizes.pop_back();
      break;
    default:
      if (sizes.size() < 9) sizes.push_back(in.size_like());
      break;
  }
}

// An Axis: mostly a valid one for `rank` dimensions, now and then not (J4, S4, SC4, R5).
inline std::uint32_t decode_axis(Reader& in, std::uint32_t rank) {
  const std::uint32_t axis = in.u8() % std::max<std::uint32_t>(rank, 1);
  if (!in.odds(4)) return axis;
  in.taint();
  static constexpr std::uint32_t kBad[] = {0, 1, 8, 0x80000000u, 0xFFFFFFFFu};
  const std::uint8_t b = in.u8();
  return b < 128 ? rank + b % 3 : kBad[b % std::size(kBad)];
}

// ---- index values -------------------------------------------------------------------------------

// Calls f(c) for every coordinate of sizes[0..rank) in row-major order, without the library.
template <class F>
DMLREF_FUZZ_UNTRACED void odometer(std::size_t rank, const std::uint32_t* sizes, F&& f) {
  for (std::size_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return;
  }
  std::uint32_t c[kMaxRank] = {};
  for (;;) {
    f(static_cast<const std::uint32_t*>(c));
    std::size_t d = rank;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++c[d] < sizes[d]) break;
      c[d] = 0;
    }
  }
}

inline bool is_index_type(DataType t) {
  return t == DataType::Int64 || t == DataType::Int32 || t == DataType::UInt64 ||
         t == DataType::UInt32;
}
inline bool is_signed_index(DataType t) { return t == DataType::Int64 || t == DataType::Int32; }

// An index as its 64-bit pattern (sign-extended for INT32), read from or written to memory.
DMLREF_FUZZ_UNTRACED inline std::uint64_t load_index(DataType t, const std::uint8_t* p) {
  switch (t) {
    case DataType::Int32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    }
    case DataType::UInt32: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      std::uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}
DMLREF_FUZZ_UNTRACED inline void store_index(DataType t, std::uint8_t* p, std::uint64_t v) {
  if (element_size(t) == 4) {
    const auto w = static_cast<std::uint32_t>(v);
    std::memcpy(p, &w, 4);
  } else if (element_size(t) == 8) {
    std::memcpy(p, &v, 8);
  }
}

// How index values are chosen for one index tensor. `n` is the size of the dimension each value
// addresses; in range means [0, n) or, for signed types, [-n, n).
class IndexSource {
 public:
  enum class Mode : std::uint8_t { InRange, WithNegatives, Shifted, Extreme };

  // `every_value_valid`: for REVERSE_SUBSEQUENCES lengths, which clamp instead of failing.
  void decode(Reader& in, DataType type, bool every_value_valid = false) {
    every_value_valid_ = every_value_valid;
    const std::uint8_t b = in.u8();
    mode_ = b < 180   ? Mode::InRange
            : b < 215 ? Mode::WithNegatives
            : b < 240 ? Mode::Shifted
                      : Mode::Extreme;
    shift_ = in.u8();
    if (!every_value_valid_ &&
        (mode_ == Mode::Extreme || (mode_ == Mode::WithNegatives && !is_signed_index(type)))) {
      in.taint();
    }
    const unsigned pokes = in.odds(48) ? 1 + in.u8() % 3 : 0;
    for (unsigned i = 0; i < pokes; ++i) pokes_.push_back({in.u16(), value(in)});
  }
  Mode mode() const { return mode_; }
  bool has_pokes() const { return !pokes_.empty(); }

  // The value of the element with row-major number `k` whose Axis coordinate is `a`.
  DMLREF_FUZZ_UNTRACED std::uint64_t at(std::uint64_t k, std::uint32_t a, std::uint64_t n,
                                        SplitMix& rng) const {
    for (const Poke& p : pokes_) {
      if (p.element == k) return p.value.resolve(n);
    }
    const std::uint64_t r = rng.next();
    switch (mode_) {
      case Mode::InRange:
        return r % n;
      case Mode::WithNegatives:
        return (r & 1) ? r % n : 0 - (1 + r % n);  // [-n, -1] as 2's compl.
      case Mode::Shifted:
        return (a + shift_) % n;  // distinct along Axis when it fits in n
      case Mode::Extreme:
        return Value{static_cast<std::uint8_t>(r), r >> 8}.resolve(n);
    }
    return 0;
  }

 private:
  // A value relative to n: in range, negative in range, or one of the edges.
  struct Value {
    std::uint8_t kind;
    std::uint64_t raw;
    std::uint64_t resolve(std::uint64_t n) const {
      if (kind < 150) return raw % n;
      if (kind < 190) return 0 - (1 + raw % n);
      switch (kind % 12) {
        case 0:
          return n;
        case 1:
          return 0 - (n + 1);  // -n - 1
        case 2:
          return (std::uint64_t{1} << 32) + raw % n;  // truncates into range
        case 3:
          return 0x80000000ull;
        case 4:
          return 0xFFFFFFFF80000000ull;  // INT32_MIN sign-extended
        case 5:
          return 0x8000000000000000ull;  // INT64_MIN
        case 6:
          return 0x7FFFFFFFFFFFFFFFull;
        case 7:
          return 0xFFFFFFFFFFFFFFFFull;
        case 8:
          return 0xFFFFFFFFull;
        case 9:
          return n - 1;
        case 10:
          return 0 - n;
        default:
          return raw;
      }
    }
  };
  struct Poke {
    std::uint16_t element;
    Value value;
  };
  Value value(Reader& in) {
    const std::uint8_t kind = in.u8();
    if (kind >= 150 && !every_value_valid_) in.taint();  // negative or an edge: maybe out of range
    return {kind, in.u64()};
  }

  bool every_value_valid_ = false;
  Mode mode_ = Mode::InRange;
  std::uint32_t shift_ = 0;
  std::vector<Poke> pokes_;
};

// Writes index values into `t`'s buffer: for every coordinate c, n_of(c) is the size the value
// addresses and axis_of(c) the coordinate the Shifted mode uses. Elements outside the buffer (a
// buffer that is too small on purpose) are skipped.
template <class NOf, class AxisOf>
DMLREF_FUZZ_UNTRACED void write_indices(World& world, const FuzzTensor& t,
                                        const IndexSource& source, SplitMix& rng, NOf&& n_of,
                                        AxisOf&& axis_of) {
  const std::size_t eb = element_size(t.desc.DataType);
  if (t.binding.block < 0 || eb == 0 || t.sizes.empty() || t.sizes.size() > kMaxRank) return;
  std::uint64_t count = 1;
  for (std::uint32_t s : t.sizes) count *= s;  // product checked by the caller's shape rules
  if (count == 0 || count > (std::uint64_t{1} << 22)) return;
  std::vector<std::uint64_t> packed(t.sizes.size());
  std::uint64_t acc = 1;
  for (std::size_t d = t.sizes.size(); d-- > 0;) {
    packed[d] = acc;
    acc *= t.sizes[d];
  }
  std::uint8_t* base = world.data(static_cast<std::size_t>(t.binding.block)) + t.binding.offset;
  std::uint64_t k = 0;
  odometer(t.sizes.size(), t.sizes.data(), [&](const std::uint32_t* c) DMLREF_FUZZ_UNTRACED {
    std::uint64_t off = 0;
    bool overflow = false;
    for (std::size_t d = 0; d < t.sizes.size(); ++d) {
      const std::uint64_t stride = t.has_strides ? t.strides[d] : packed[d];
      std::uint64_t term;
      overflow |= __builtin_mul_overflow(std::uint64_t{c[d]}, stride, &term);
      overflow |= __builtin_add_overflow(off, term, &off);
    }
    const std::uint64_t n = std::max<std::uint64_t>(n_of(c), 1);
    const std::uint64_t v = source.at(k++, axis_of(c), n, rng);
    if (!overflow && off < t.binding.size / eb) store_index(t.desc.DataType, base + off * eb, v);
  });
}

// True when no two coordinates of `t` share an element (false as well when `t` is too large to
// tell cheaply). Index values are written per coordinate, so a tensor that repeats an element
// keeps only the last value written there: valid for that coordinate, maybe not for the others.
DMLREF_FUZZ_UNTRACED inline bool injective(const FuzzTensor& t) {
  if (!t.has_strides) return true;
  if (t.sizes.empty() || t.sizes.size() > kMaxRank) return false;
  std::uint64_t count = 1;
  for (std::uint32_t s : t.sizes) count *= s;
  if (count > (std::uint64_t{1} << 16)) return false;
  std::vector<std::uint64_t> offsets;
  offsets.reserve(count);
  odometer(t.sizes.size(), t.sizes.data(), [&](const std::uint32_t* c) DMLREF_FUZZ_UNTRACED {
    std::uint64_t off = 0;
    for (std::size_t d = 0; d < t.sizes.size(); ++d) off += std::uint64_t{c[d]} * t.strides[d];
    offsets.push_back(off);
  });
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end();
}

// The value an index selects after the negative-index rule, or nullopt when outside [0, n).
DMLREF_FUZZ_UNTRACED inline std::optional<std::uint64_t> normalize(DataType type, std::uint64_t raw,
                                                                   std::uint64_t n) {
  if (is_signed_index(type) && static_cast<std::int64_t>(raw) < 0) {
    const std::uint64_t magnitude = 0 - raw;
    if (magnitude > n) return std::nullopt;
    return n - magnitude;
  }
  if (raw >= n) return std::nullopt;
  return raw;
}
DMLREF_FUZZ_UNTRACED inline std::uint64_t clamp(DataType type, std::uint64_t raw, std::uint64_t n) {
  if (auto k = normalize(type, raw, n)) return *k;
  return is_signed_index(type) && static_cast<std::int64_t>(raw) < 0 ? 0 : n - 1;
}

// ---- the independent model's view of a tensor ---------------------------------------------------

// A tensor in a World, addressed with the spec's arithmetic alone (T5, T6): no dmlref::Layout.
struct Geo {
  std::size_t rank = 0;
  std::uint32_t sizes[kMaxRank] = {};
  std::uint64_t strides[kMaxRank] = {};
  std::size_t eb = 0;
  std::uint8_t* base = nullptr;

  DMLREF_FUZZ_UNTRACED std::uint8_t* at(const std::uint32_t* c) const {
    std::uint64_t off = 0;
    for (std::size_t d = 0; d < rank; ++d) off += std::uint64_t{c[d]} * strides[d];
    return base + off * eb;
  }
  std::uint64_t count() const {
    std::uint64_t n = 1;
    for (std::size_t d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
};

inline Geo geo(const FuzzTensor& t, const World& w) {
  Geo g;
  g.rank = t.sizes.size();
  if (g.rank < 1 || g.rank > kMaxRank)
    defect(t.name + ": accepted with DimensionCount " + std::to_string(g.rank));
  g.eb = element_size(t.desc.DataType);
  std::uint64_t acc = 1;
  for (std::size_t d = g.rank; d-- > 0;) {
    g.sizes[d] = t.sizes[d];
    g.strides[d] = t.has_strides ? t.strides[d] : acc;
    acc *= t.sizes[d];
  }
  g.base = static_cast<std::uint8_t*>(t.binding.ptr(w));
  return g;
}

// The spec's own copy of one element: bytes, so NaN payloads survive.
DMLREF_FUZZ_UNTRACED inline void copy_element(const Geo& to, const std::uint32_t* to_c,
                                              const Geo& from, const std::uint32_t* from_c) {
  std::memcpy(to.at(to_c), from.at(from_c), to.eb);
}

// ---- the independent rule check of an accepted call ---------------------------------------------

// [first byte, one past the last) a validated tensor addresses in `w` (strides are unsigned).
struct ByteRange {
  std::uintptr_t begin;
  std::uintptr_t end;
};

// T1-T4, T8-T11 and (outputs) T12 for a tensor the operator accepted: recomputed here, so a rule
// the library forgot shows up even when its result looks right.
DMLREF_FUZZ_UNTRACED inline ByteRange check_accepted_tensor(const FuzzTensor& t, const World& w) {
  const BufferTensorDesc& d = t.desc;
  auto fail = [&](const std::string& why) { defect("accepted " + t.name + " although " + why); };
  if (!is_valid(d.DataType)) fail("its DataType is invalid (T1)");
  if (d.DimensionCount < 1 || d.DimensionCount > kMaxRank)
    fail("DimensionCount is out of 1..8 (T2)");
  std::uint64_t count = 1, last = 0;
  std::uint64_t packed = 1;
  std::uint64_t strides[kMaxRank] = {};
  for (std::size_t i = d.DimensionCount; i-- > 0;) {
    strides[i] = d.Strides ? d.Strides[i] : packed;
    if (d.Sizes[i] == 0) fail("a size is 0 (T3)");
    if (__builtin_mul_overflow(count, std::uint64_t{d.Sizes[i]}, &count) ||
        count > kMaxElementCount) {
      fail("it holds more than 2^32 - 1 elements (T4)");
    }
    packed *= d.Sizes[i];
    std::uint64_t reach = 0;
    if (__builtin_mul_overflow(std::uint64_t{d.Sizes[i] - 1}, strides[i], &reach) ||
        __builtin_add_overflow(last, reach, &last)) {
      fail("its strides reach past 64 bits (T8)");
    }
  }
  const std::size_t eb = element_size(d.DataType);
  std::uint64_t bytes = 0;
  if (last >= (std::uint64_t{1} << 63) ||
      __builtin_mul_overflow(last + 1, std::uint64_t{eb}, &bytes) || bytes > ~std::uint64_t{3}) {
    fail("its minimum size overflows 64 bits (T8)");
  }
  const std::uint64_t minimum = (bytes + 3) & ~std::uint64_t{3};
  if (d.TotalTensorSizeInBytes < minimum) fail("TotalTensorSizeInBytes is below the minimum (T8)");
  const std::uint32_t align = d.GuaranteedBaseOffsetAlignment;
  if (align != 0 && ((align & (align - 1)) != 0 || align < eb))
    fail("its alignment is invalid (T9)");
  const auto address = reinterpret_cast<std::uintptr_t>(t.binding.ptr(w));
  if (address == 0) fail("its buffer is null");
  if (address % eb != 0 || (align != 0 && address % align != 0))
    fail("its buffer is misaligned (T9)");
  if (t.binding.size < d.TotalTensorSizeInBytes) fail("its buffer is too small (T10)");
  const auto flags = static_cast<std::uint32_t>(d.Flags);
  if (flags > 1 || (t.is_output && flags != 0)) fail("its Flags are invalid (T11)");
  if (t.is_output) {
    // T12 by brute force where affordable: every coordinate at its own offset.
    bool broadcast = false;
    for (std::size_t i = 0; i < d.DimensionCount; ++i)
      broadcast |= d.Sizes[i] > 1 && strides[i] == 0;
    if (broadcast) fail("an output dimension has stride 0 (T12)");
    if (count <= (std::uint64_t{1} << 16)) {
      std::vector<std::uint64_t> offsets;
      offsets.reserve(count);
      odometer(d.DimensionCount, d.Sizes, [&](const std::uint32_t* c) DMLREF_FUZZ_UNTRACED {
        std::uint64_t off = 0;
        for (std::size_t i = 0; i < d.DimensionCount; ++i) off += std::uint64_t{c[i]} * strides[i];
        offsets.push_back(off);
      });
      std::sort(offsets.begin(), offsets.end());
      if (std::adjacent_find(offsets.begin(), offsets.end()) != offsets.end()) {
        fail("the output addresses an element twice (T12)");
      }
    }
  }
  return {address, address + static_cast<std::uintptr_t>((last + 1) * eb)};
}

// T13 for an accepted call: no output's bytes meet another tensor's.
inline void check_accepted_call(std::span<const FuzzTensor* const> tensors, const World& w) {
  std::vector<ByteRange> ranges;
  for (const FuzzTensor* t : tensors) ranges.push_back(check_accepted_tensor(*t, w));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i]->is_output) continue;
    for (std::size_t j = 0; j < tensors.size(); ++j) {
      if (i == j) continue;
      if (ranges[i].begin < ranges[j].end && ranges[j].begin < ranges[i].end) {
        defect("accepted " + tensors[i]->name + " overlapping " + tensors[j]->name + " (T13)");
      }
    }
  }
}

// ---- the driver ---------------------------------------------------------------------------------

struct Outcome {
  bool valid = false;
  std::uint64_t signature = 0;  // what kind of call it was, for picking diverse seeds
};

// Counts per run, printed at exit: how often the fuzzer got past validation, and which rules
// stopped it otherwise.
struct Stats {
  const char* op = "";
  std::uint64_t runs = 0, valid = 0, clean = 0, clean_valid = 0;
  std::uint64_t by_code[64] = {};
};
inline Stats& stats() {
  static Stats s;
  return s;
}
inline bool expect_valid() {
  static const bool on = std::getenv("DMLREF_FUZZ_EXPECT_VALID") != nullptr;
  return on;
}

inline void print_stats() {
  const Stats& s = stats();
  if (s.runs == 0 || expect_valid()) return;
  std::fprintf(
      stderr, "dmlref fuzz %s: %llu calls, %llu accepted (%.1f%%), %llu untainted; rejected:", s.op,
      static_cast<unsigned long long>(s.runs), static_cast<unsigned long long>(s.valid),
      100.0 * double(s.valid) / double(s.runs), static_cast<unsigned long long>(s.clean));
  if (s.runs == s.valid) std::fprintf(stderr, " none");
  for (std::uint32_t c = 0; c < 64; ++c) {
    if (s.by_code[c] == 0) continue;
    std::fprintf(stderr, " %s %llu",
                 std::string(error_code_name(static_cast<ErrorCode>(c))).c_str(),
                 static_cast<unsigned long long>(s.by_code[c]));
  }
  std::fprintf(stderr, "\n");
}

// Codes a call may raise only once the buffers are known: a description the desc-only validator
// accepts can still fail with these.
inline bool needs_buffers(ErrorCode code) {
  switch (code) {
    case ErrorCode::NullPointer:
    case ErrorCode::T9:
    case ErrorCode::T10:
    case ErrorCode::T13:
    case ErrorCode::SC8:
    case ErrorCode::G10:
    case ErrorCode::ScatterDuplicate:
      return true;
    default:
      return false;
  }
}

// What a harness supplies for one decoded call (see the file comment):
//   World world; std::vector<const FuzzTensor*> all() const; std::string describe() const;
//   void run(const World&) const;             the runtime entry point
//   void validate_bound(const World&) const;  validate_<op>(desc, buffers, options)
//   void validate_desc() const;               validate_<op>(desc, options)
//   void typed_reference(const World&) const; dmlref::reference::<op> on typed views
//   void model(const World&) const;           the spec's semantics, written here
template <class Call>
Outcome check_call(const Call& call, bool clean) {
  const std::function<std::string()> describe = [&] { return call.describe(); };
  current_call() = &describe;
  struct Reset {
    ~Reset() { current_call() = nullptr; }
  } reset;
  Stats& s = stats();
  ++s.runs;
  s.clean += clean ? 1 : 0;
  const World pristine = call.world.clone();
  std::optional<Error> error;
  try {
    call.run(call.world);
  } catch (const Error& e) {
    error = e;
  } catch (const std::exception& e) {
    defect(std::string("the runtime entry point threw a non-dmlref exception: ") + e.what());
  } catch (...) {
    defect("the runtime entry point threw something that is not a std::exception");
  }

  if (error) {
    const ErrorCode code = error->code();
    ++s.by_code[static_cast<std::uint32_t>(code) % 64];
    if (clean)
      defect(std::string("a call decoded without hostile choices was rejected: ") + error->what());
    if (const std::string d = call.world.difference(pristine); !d.empty()) {
      defect(std::string("a rejected call (") + error->what() + ") changed a byte: " + d);
    }
    try {
      call.validate_bound(call.world);
      defect(std::string("validate with buffers accepted a call the operator rejected: ") +
             error->what());
    } catch (const Error& e) {
      if (e.code() != code) {
        defect(std::string("validate with buffers says ") + e.what() + " but the operator said " +
               error->what());
      }
    }
    try {
      call.validate_desc();
      if (!needs_buffers(code)) {
        defect(std::string("desc-only validation accepted a call rejected for its description: ") +
               error->what());
      }
    } catch (const Error& e) {
      if (e.code() != code) {
        defect(std::string("desc-only validation says ") + e.what() + " but the operator said " +
               error->what());
      }
    }
    if (const std::string d = call.world.difference(pristine); !d.empty()) {
      defect("validation changed a byte: " + d);
    }
    return {false, 0};
  }

  ++s.valid;
  s.clean_valid += clean ? 1 : 0;
  std::uint64_t signature = 0;  // which tensors have explicit strides, which share a block
  const std::vector<const FuzzTensor*> tensors = call.all();
  for (const FuzzTensor* t : tensors) {
    const bool shared = std::count_if(tensors.begin(), tensors.end(), [&](const FuzzTensor* u) {
                          return u->binding.block == t->binding.block;
                        }) > 1;
    signature = signature * 4 + (t->has_strides ? 1 : 0) + (shared ? 2 : 0);
  }
  auto must_pass = [&](const char* what, auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      defect(std::string(what) + " rejected a call the operator accepted: " + e.what());
    }
  };
  must_pass("desc-only validation", [&] { call.validate_desc(); });
  must_pass("validation with buffers", [&] { call.validate_bound(call.world); });
  check_accepted_call(tensors, call.world);

  const World expected = pristine.clone();
  must_pass("the typed reference", [&] { call.typed_reference(expected); });
  if (const std::string d = call.world.difference(expected); !d.empty()) {
    defect("the runtime result differs from the typed reference's: " + d);
  }
  const World modeled = pristine.clone();
  call.model(modeled);
  if (const std::string d = call.world.difference(modeled); !d.empty()) {
    defect("the runtime result differs from the spec's model: " + d);
  }
  return {true, signature};
}

}  // namespace dmlref::fuzz

// Registers one harness under its operator's name (harness_registry.cpp): `run` decodes and checks
// one input. Write it inside the harness file's own namespace: the harnesses share one unit.
#define DMLREF_FUZZ_HARNESS(op_name, run)          \
  [[maybe_unused]] const bool registered_harness = \
      dmlref::fuzz::register_harness(op_name, run);
