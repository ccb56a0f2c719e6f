// bench_table's shape matrix (linked into bench_table): each case class of bench/peers.py's table
// on seeded random shapes: power-of-two and odd sizes, 2 to 8 dimensions, elements of 1 to 8 bytes,
// lengths and indices that differ per row. Every shape runs on one thread and on all of them, and
// reports `memcpy_ratio`: a one-thread memcpy of the same output bytes, timed in the same
// benchmark in rounds alternating with the operator, over the operator's time (the fastest round
// of each; above 1: faster than memcpy).
// A summary per class reports the minimum and median of that ratio over its shapes
// ("matrix/<class>/summary": min_1t, median_1t, min_all, median_all), so a shape that falls
// behind shows in the repository's own numbers. The shapes of bench/peers.py's table (float32, 16
// and 256 MiB) run as "peers/<class>/<MiB>", the engine alone on the shapes numpy and PyTorch run.
//   DMLREF_BENCH_MATRIX_MIB   output size of the matrix's shapes (default 16)
//   DMLREF_BENCH_MATRIX_SHAPES  shapes per class (default 6)
#include "bench_baseline.hpp"

#include <dmlref/dmlref.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using dmlref::BufferTensorDesc;
using dmlref::DataType;
using dmlref::TensorDesc;
using dmlref::bench::AlignedBuffer;
using Sizes = std::vector<std::uint32_t>;

// One prepared call: its tensors, their buffers and the call itself.
struct Case {
  std::vector<std::unique_ptr<TensorDesc>> tensors;
  std::vector<BufferTensorDesc> descs;  // each tensor's, in the order of `tensors`
  std::vector<std::unique_ptr<AlignedBuffer>> buffers;
  std::uint64_t output_bytes = 0;
  std::function<void(Case&)> call;

  // A tensor and its buffer; returns its index.
  std::size_t add(DataType type, Sizes sizes, Sizes strides = {}) {
    tensors.push_back(std::make_unique<TensorDesc>(type, std::move(sizes), std::move(strides)));
    descs.push_back(tensors.back()->desc());  // points into the TensorDesc, which never moves
    buffers.push_back(std::make_unique<AlignedBuffer>(
        static_cast<std::size_t>(tensors.back()->total_tensor_size_in_bytes)));
    return tensors.size() - 1;
  }
  // The shape, for the benchmark's label: each tensor's element bytes and sizes ("4:{64,256}").
  std::string label() const {
    std::string text;
    for (const auto& t : tensors) {
      text += (text.empty() ? "" : " ") + std::to_string(dmlref::element_size(t->data_type)) + ":{";
      for (std::size_t d = 0; d < t->sizes.size(); ++d) {
        text += (d == 0 ? "" : ",") + std::to_string(t->sizes[d]);
      }
      text += t->strides.empty() ? "}" : "}T";
    }
    return text;
  }
  dmlref::ConstBuffer in(std::size_t i) { return {buffers[i]->data(), buffers[i]->size()}; }
  dmlref::Buffer out(std::size_t i) { return {buffers[i]->data(), buffers[i]->size()}; }
  template <class I>
  I* as(std::size_t i) {
    return buffers[i]->as<I>();
  }
};

using Factory = std::function<std::unique_ptr<Case>()>;

std::uint32_t element_bytes(DataType t) {
  return static_cast<std::uint32_t>(dmlref::element_size(t));
}

// A seeded draw of the matrix's variety.
struct Draw {
  std::mt19937 rng;
  std::uint64_t bytes;

  DataType type() {
    static constexpr DataType kTypes[] = {DataType::UInt8, DataType::Float16, DataType::Float32,
                                          DataType::Int64, DataType::Float32};
    return kTypes[rng() % 5];
  }
  // 0 to 6 leading dimensions of sizes 1-3 (ranks 2 to 8 with the two a class sizes itself).
  Sizes leading() {
    Sizes s(rng() % 7);
    for (auto& d : s) d = 1 + static_cast<std::uint32_t>(rng() % 3);
    return s;
  }
  static std::uint64_t product(const Sizes& s) {
    return std::accumulate(s.begin(), s.end(), std::uint64_t{1}, std::multiplies<>());
  }
  // A size near `about`: a power of two, or odd (every other draw).
  std::uint32_t size_near(std::uint64_t about, bool pow2) {
    about = std::max<std::uint64_t>(about, 1);
    if (pow2) return std::uint32_t{1} << (63 - __builtin_clzll(about));
    const std::uint64_t odd = about | 1;
    return static_cast<std::uint32_t>(odd > 4 ? odd - 2 * (rng() % 3) : odd);
  }
};

// The first `n` of `s` (all of them if fewer). Not resize: GCC 12 warned of bounds in the
// growing branch resize inlines, never taken here.
Sizes first(const Sizes& s, std::size_t n) {
  return Sizes(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(std::min(n, s.size())));
}

Sizes concat(Sizes a, const Sizes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---- the classes -------------------------------------------------------------------------------

// JOIN (or SPLIT) of 2-4 pieces along the outermost dimension.
std::unique_ptr<Case> join_axis0(std::uint64_t bytes, DataType type, std::uint32_t cols,
                                 std::uint32_t pieces, const Sizes& lead) {
  auto c = std::make_unique<Case>();
  const std::uint64_t per_row = std::uint64_t{cols} * element_bytes(type) * Draw::product(lead);
  const auto rows = static_cast<std::uint32_t>(std::max<std::uint64_t>(pieces, bytes / per_row));
  const Sizes inner = concat(lead, {cols});  // the sizes after the axis
  std::vector<std::size_t> in;
  std::uint32_t used = 0;
  for (std::uint32_t i = 0; i < pieces; ++i) {
    const std::uint32_t n = i + 1 == pieces ? rows - used : rows / pieces + (i % 2);
    used += n;
    in.push_back(c->add(type, concat({n}, inner)));
  }
  const std::size_t out = c->add(type, concat({rows}, inner));
  c->output_bytes = c->tensors[out]->total_tensor_size_in_bytes;
  c->call = [in, out, pieces](Case& k) {
    std::vector<dmlref::ConstBuffer> inputs;
    for (std::size_t i : in) inputs.push_back(k.in(i));
    const dmlref::JoinOperatorDesc jd{pieces, k.descs.data(), &k.descs[out], 0};
    dmlref::join(jd, inputs, k.out(out));
  };
  return c;
}

// JOIN (or SPLIT, `split`) of pieces along the last dimension, piece i `widths[i]` elements wide.
std::unique_ptr<Case> rows_of(std::uint64_t bytes, DataType type, const Sizes& widths,
                              const Sizes& lead, bool split) {
  auto c = std::make_unique<Case>();
  const std::uint32_t total = std::accumulate(widths.begin(), widths.end(), 0u);
  const std::uint64_t per_row = std::uint64_t{total} * element_bytes(type) * Draw::product(lead);
  const auto rows = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, bytes / per_row));
  const Sizes whole = concat(lead, {rows, total});
  std::vector<std::size_t> parts;
  for (const std::uint32_t w : widths) parts.push_back(c->add(type, concat(lead, {rows, w})));
  const std::size_t w = c->add(type, whole);
  const auto axis = static_cast<std::uint32_t>(whole.size() - 1);
  const auto pieces = static_cast<std::uint32_t>(widths.size());
  c->output_bytes = c->tensors[w]->total_tensor_size_in_bytes;
  c->call = [parts, w, pieces, axis, split](Case& k) {
    if (split) {
      std::vector<dmlref::Buffer> outs;
      for (std::size_t i : parts) outs.push_back(k.out(i));
      const dmlref::SplitOperatorDesc sd{&k.descs[w], pieces, k.descs.data(), axis};
      dmlref::split(sd, k.in(w), outs);
    } else {
      std::vector<dmlref::ConstBuffer> ins;
      for (std::size_t i : parts) ins.push_back(k.in(i));
      const dmlref::JoinOperatorDesc jd{pieces, k.descs.data(), &k.descs[w], axis};
      dmlref::join(jd, ins, k.out(w));
    }
  };
  return c;
}

// The same with 2-8 pieces whose rows are each 64 bytes.
std::unique_ptr<Case> rows64(std::uint64_t bytes, DataType type, std::uint32_t pieces,
                             const Sizes& lead, bool split) {
  return rows_of(bytes, type, Sizes(pieces, 64 / element_bytes(type)), lead, split);
}

// A copy whose last two dimensions are transposed: JOIN of one input whose strides are those of
// the {cols, rows} array it is stored as.
std::unique_ptr<Case> transposed(DataType type, std::uint32_t rows, std::uint32_t cols,
                                 const Sizes& lead) {
  auto c = std::make_unique<Case>();
  const Sizes sizes = concat(lead, {rows, cols});
  Sizes strides(sizes.size());
  strides[sizes.size() - 2] = 1;
  strides[sizes.size() - 1] = rows;
  std::uint32_t step = rows * cols;
  for (std::size_t i = lead.size(); i-- > 0;) {
    strides[i] = step;
    step *= lead[i];
  }
  const std::size_t in = c->add(type, sizes, strides);
  const std::size_t out = c->add(type, sizes);
  c->output_bytes = c->tensors[out]->total_tensor_size_in_bytes;
  c->call = [in, out](Case& k) {
    const dmlref::JoinOperatorDesc jd{1, &k.descs[in], &k.descs[out],
                                      static_cast<std::uint32_t>(k.tensors[out]->sizes.size() - 1)};
    dmlref::join(jd, {k.in(in)}, k.out(out));
  };
  return c;
}

// A copy of one input stored in a random order of its 3 to 8 dimensions, of similar sizes (an
// ONNX Transpose of many dimensions): JOIN of that input, whose strides are those of the
// permuted array it is stored as. Each size near what the output bytes left over allow.
std::unique_ptr<Case> permuted(Draw& d, DataType type, bool pow2) {
  auto c = std::make_unique<Case>();
  const auto rank = 3 + static_cast<std::uint32_t>(d.rng() % 6);
  Sizes sizes(rank);
  double left = static_cast<double>(d.bytes / element_bytes(type));
  for (std::uint32_t k = 0; k < rank; ++k) {
    const double jitter = k + 1 == rank ? 1.0 : 0.7 + 0.6 * static_cast<double>(d.rng() % 64) / 64;
    const double about = std::pow(left, 1.0 / (rank - k)) * jitter;
    sizes[k] = std::max(2u, d.size_near(static_cast<std::uint64_t>(about), pow2));
    left /= sizes[k];
  }
  std::vector<std::uint32_t> order(rank);  // the stored order, outermost first
  std::iota(order.begin(), order.end(), 0u);
  while (std::is_sorted(order.begin(), order.end())) {
    std::shuffle(order.begin(), order.end(), d.rng);
  }
  Sizes strides(rank);
  std::uint32_t step = 1;
  for (std::uint32_t k = rank; k-- > 0;) {
    strides[order[k]] = step;
    step *= sizes[order[k]];
  }
  const std::size_t in = c->add(type, sizes, strides);
  const std::size_t out = c->add(type, sizes);
  c->output_bytes = c->tensors[out]->total_tensor_size_in_bytes;
  c->call = [in, out, rank](Case& k) {
    const dmlref::JoinOperatorDesc jd{1, &k.descs[in], &k.descs[out], rank - 1};
    dmlref::join(jd, {k.in(in)}, k.out(out));
  };
  return c;
}

// REVERSE_SUBSEQUENCES along dimension `axis` of {lead..., rows, cols} (axis = lead.size(): the
// rows, one length per column; axis + 1: the last, one length per row), lengths random in
// [0, axis size].
std::unique_ptr<Case> reverse(Draw& d, DataType type, std::uint32_t rows, std::uint32_t cols,
                              const Sizes& lead, bool inner, bool full = false) {
  auto c = std::make_unique<Case>();
  const Sizes sizes = concat(lead, {rows, cols});
  const auto axis = static_cast<std::uint32_t>(lead.size() + (inner ? 1 : 0));
  Sizes len_sizes = sizes;
  len_sizes[axis] = 1;
  const std::size_t in = c->add(type, sizes);
  const std::size_t len = c->add(DataType::UInt32, len_sizes);
  const std::size_t out = c->add(type, sizes);
  const std::uint64_t count = Draw::product(len_sizes);
  for (std::uint64_t i = 0; i < count; ++i) {
    c->as<std::uint32_t>(len)[i] =
        full ? sizes[axis] : static_cast<std::uint32_t>(d.rng() % (sizes[axis] + 1));
  }
  c->output_bytes = c->tensors[out]->total_tensor_size_in_bytes;
  c->call = [in, len, out, axis](Case& k) {
    const dmlref::ReverseSubsequencesOperatorDesc rd{&k.descs[in], &k.descs[len], &k.descs[out],
                                                     axis};
    dmlref::reverse_subsequences(rd, k.in(in), k.in(len), k.out(out));
  };
  return c;
}

// GATHER_ND1 of `count` rows of `row_bytes` from {lead..., rows, width} by random tuples of
// indices (rows picked uniformly, repeats allowed): indices {1..., count, m}, one coordinate
// per leading dimension (of size 1 or more) plus the row.
std::unique_ptr<Case> gather(Draw& d, DataType type, std::uint32_t row_bytes, const Sizes& lead) {
  auto c = std::make_unique<Case>();
  const std::uint32_t width = row_bytes / element_bytes(type);
  const std::uint64_t out_rows = d.bytes / row_bytes;
  const std::uint64_t lead_count = Draw::product(lead);
  const auto rows = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, out_rows / lead_count));
  const Sizes in_sizes = concat(lead, {rows, width});
  const auto rank = static_cast<std::uint32_t>(in_sizes.size());
  const std::uint32_t m = rank - 1;  // a coordinate per dimension but the row's
  Sizes ix_sizes(rank, 1);
  ix_sizes[rank - 2] = static_cast<std::uint32_t>(out_rows);
  ix_sizes[rank - 1] = m;
  const Sizes out_sizes = dmlref::infer_gather_nd1_output_sizes(in_sizes, ix_sizes, rank, rank, 0);
  const std::size_t in = c->add(type, in_sizes);
  const std::size_t ix = c->add(DataType::UInt32, ix_sizes);
  const std::size_t out = c->add(type, out_sizes);
  auto* tuples = c->as<std::uint32_t>(ix);
  for (std::uint64_t i = 0; i < out_rows; ++i) {
    for (std::uint32_t j = 0; j < m; ++j) {
      tuples[i * m + j] = static_cast<std::uint32_t>(d.rng() % in_sizes[j]);
    }
  }
  c->output_bytes = c->tensors[out]->total_tensor_size_in_bytes;
  c->call = [in, ix, out, rank](Case& k) {
    const dmlref::GatherNd1OperatorDesc gd{&k.descs[in], &k.descs[ix], &k.descs[out], rank, rank,
                                           0};
    dmlref::gather_nd1(gd, k.in(in), k.in(ix), k.out(out));
  };
  return c;
}

// SCATTER along the last dimension of {lead..., rows, cols}, each row's indices a permutation.
std::unique_ptr<Case> scatter(Draw& d, DataType type, std::uint32_t rows, std::uint32_t cols,
                              const Sizes& lead) {
  auto c = std::make_unique<Case>();
  const Sizes sizes = concat(lead, {rows, cols});
  const std::size_t in = c->add(type, sizes);
  const std::size_t ix = c->add(DataType::UInt32, sizes);
  const std::size_t up = c->add(type, sizes);
  const std::size_t out = c->add(type, sizes);
  auto* p = c->as<std::uint32_t>(ix);
  const std::uint64_t all_rows = Draw::product(sizes) / cols;
  for (std::uint64_t r = 0; r < all_rows; ++r) {
    std::iota(p + r * cols, p + (r + 1) * cols, 0u);
    std::shuffle(p + r * cols, p + (r + 1) * cols, d.rng);
  }
  c->output_bytes = c->tensors[out]->total_tensor_size_in_bytes;
  const auto axis = static_cast<std::uint32_t>(sizes.size() - 1);
  c->call = [in, ix, up, out, axis](Case& k) {
    const dmlref::ScatterOperatorDesc sd{&k.descs[in], &k.descs[ix], &k.descs[up], &k.descs[out],
                                         axis};
    dmlref::scatter(sd, k.in(in), k.in(ix), k.in(up), k.out(out));
  };
  return c;
}

// ---- the classes' draws ------------------------------------------------------------------------

// Rows and columns for `bytes` of elements of `type` under `lead`: columns near `cols_about`.
std::pair<std::uint32_t, std::uint32_t> rows_cols(Draw& d, DataType type, const Sizes& lead,
                                                  std::uint64_t cols_about, bool pow2) {
  const std::uint32_t cols = d.size_near(cols_about, pow2);
  const std::uint64_t per_row = std::uint64_t{cols} * element_bytes(type) * Draw::product(lead);
  const std::uint32_t rows = d.size_near(std::max<std::uint64_t>(2, d.bytes / per_row), pow2);
  return {rows, cols};
}

struct Class {
  const char* name;
  std::function<std::unique_ptr<Case>(Draw&, int shape)> make;   // the matrix's draw
  // bench/peers.py's shape (none for classes of the matrix only)
  std::function<std::unique_ptr<Case>(std::uint64_t bytes)> peers;
};

std::uint64_t about(Draw& d, std::uint64_t lo, std::uint64_t hi) {
  return lo + d.rng() % (hi - lo);
}

// The classes that differ only in an argument: JOIN or SPLIT (`split`) of 64-byte rows,
// REVERSE along the rows or the last dimension (`inner`; columns drawn from `cols_lo` up),
// GATHER_ND1 of rows of `row_bytes`.
Class rows64_class(const char* name, bool split) {
  return {name,
          [split](Draw& d, int) {
            const DataType t = d.type();
            const auto pieces = 2 + static_cast<std::uint32_t>(d.rng() % 7);
            return rows64(d.bytes, t, pieces, d.leading(), split);
          },
          [split](std::uint64_t bytes) { return rows64(bytes, DataType::Float32, 4, {}, split); }};
}

Class reverse_class(const char* name, std::uint64_t cols_lo, bool inner) {
  return {name,
          [cols_lo, inner](Draw& d, int s) {
            const DataType t = d.type();
            const Sizes lead = d.leading();
            const auto [rows, cols] = rows_cols(d, t, lead, about(d, cols_lo, 4096), s % 2 == 0);
            return reverse(d, t, rows, cols, lead, inner);
          },
          [inner](std::uint64_t bytes) {
            Draw d{std::mt19937(1), bytes};
            return reverse(d, DataType::Float32, static_cast<std::uint32_t>(bytes / 4096), 1024, {},
                           inner);
          }};
}

Class gather_class(const char* name, std::uint32_t row_bytes) {
  return {name,
          [row_bytes](Draw& d, int) {
            const DataType t = d.type();
            const Sizes lead = first(d.leading(), 3);
            return gather(d, t, row_bytes, lead);
          },
          [row_bytes](std::uint64_t bytes) {
            Draw d{std::mt19937(1), bytes};
            return gather(d, DataType::Float32, row_bytes, {});
          }};
}

std::vector<Class> classes() {
  const DataType f32 = DataType::Float32;
  std::vector<Class> c;
  c.push_back({"join_axis0",
               [](Draw& d, int s) {
                 const DataType t = d.type();
                 const Sizes lead = d.leading();
                 const std::uint32_t cols = d.size_near(about(d, 16, 4096), s % 2 == 0);
                 const auto pieces = 2 + static_cast<std::uint32_t>(d.rng() % 3);
                 return join_axis0(d.bytes, t, cols, pieces, lead);
               },
               [f32](std::uint64_t bytes) {
                 return join_axis0(bytes, f32, 1024, 2, {});
               }});
  c.push_back(rows64_class("join_rows64", false));
  c.push_back(rows64_class("split_rows64", true));
  // Matrix only: JOIN or SPLIT of 2-5 pieces along the last axis, each 1 to 48 elements wide,
  // so most runs start or end off every 16-byte boundary.
  for (const bool split : {false, true}) {
    c.push_back({split ? "split_rows_mixed" : "join_rows_mixed",
                 [split](Draw& d, int) {
                   const DataType t = d.type();
                   Sizes widths(2 + d.rng() % 4);
                   for (auto& w : widths) w = 1 + static_cast<std::uint32_t>(d.rng() % 48);
                   return rows_of(d.bytes, t, widths, d.leading(), split);
                 },
                 nullptr});
  }
  c.push_back({"transposed",
               [](Draw& d, int s) {
                 const DataType t = d.type();
                 const Sizes lead = first(d.leading(), 2);
                 const auto [rows, cols] = rows_cols(d, t, lead, about(d, 256, 4096), s % 2 == 0);
                 return transposed(t, rows, cols, lead);
               },
               [f32](std::uint64_t bytes) {
                 const std::uint32_t rows = bytes >= (std::uint64_t{64} << 20) ? 16384 : 4096;
                 return transposed(f32, rows, static_cast<std::uint32_t>(bytes / 4 / rows), {});
               }});
  // Matrix only: transposes with one side of 2 to 16 elements (channels last to channels first,
  // or back), and (below) the last two dimensions of large ones swapped.
  c.push_back({"transposed_short",
               [](Draw& d, int s) {
                 const DataType t = d.type();
                 const Sizes lead = first(d.leading(), 2);
                 const auto side = 2 + static_cast<std::uint32_t>(d.rng() % 15);
                 const std::uint64_t per =
                     std::uint64_t{side} * element_bytes(t) * Draw::product(lead);
                 const auto other =
                     static_cast<std::uint32_t>(std::max<std::uint64_t>(2, d.bytes / per));
                 return s % 2 == 0 ? transposed(t, side, other, lead)
                                   : transposed(t, other, side, lead);
               },
               nullptr});
  c.push_back({"permuted", [](Draw& d, int s) { return permuted(d, d.type(), s % 2 == 0); },
               nullptr});
  c.push_back(reverse_class("reverse_axis0", 64, false));
  c.push_back(reverse_class("reverse_inner", 16, true));
  // Narrow rows, where the wide classes above never draw: rows of 1 to 32 elements reversed
  // along axis 0, whole (a flip) or by a random length per column, and runs of 2 to 8 elements
  // along the last axis, each with its own length. Matrix only (no peers.py shape).
  for (const bool full : {true, false}) {
    c.push_back({full ? "reverse_axis0_narrow" : "reverse_axis0_narrow_lengths",
                 [full](Draw& d, int) {
                   const DataType t = d.type();
                   const Sizes lead = d.leading();
                   const auto [rows, cols] = rows_cols(d, t, lead, about(d, 1, 33), false);
                   return reverse(d, t, rows, cols, lead, false, full);
                 },
                 nullptr});
  }
  c.push_back({"reverse_inner_short",
               [](Draw& d, int) {
                 const DataType t = d.type();
                 const Sizes lead = d.leading();
                 const auto [rows, cols] = rows_cols(d, t, lead, about(d, 2, 9), false);
                 return reverse(d, t, rows, cols, lead, true);
               },
               nullptr});
  c.push_back(gather_class("gather_rows256", 256));
  c.push_back(gather_class("gather_rows64", 64));
  c.push_back({"scatter_perm_axis1",
               [](Draw& d, int s) {
                 const DataType t = d.type();
                 const Sizes lead = d.leading();
                 const auto [rows, cols] = rows_cols(d, t, lead, about(d, 16, 2048), s % 2 == 0);
                 return scatter(d, t, rows, cols, lead);
               },
               [f32](std::uint64_t bytes) {
                 Draw d{std::mt19937(1), bytes};
                 return scatter(d, f32, static_cast<std::uint32_t>(bytes / 4096), 1024, {});
               }});
  return c;
}

// ---- running -----------------------------------------------------------------------------------

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// Seconds per call of one timing of `calls` calls of f.
template <class F>
double seconds_per_call(F&& f, std::uint64_t calls) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < calls; ++i) {
    f();
    benchmark::ClobberMemory();
  }
  const std::chrono::duration<double> t = std::chrono::steady_clock::now() - t0;
  return t.count() / static_cast<double>(calls);
}

// The operator's speed as a ratio to a one-thread memcpy of its output bytes between two
// pre-touched buffers: five rounds, each timing the operator then memcpy over the same number of
// calls, and the fastest time of each (the machine is shared; the fastest is the least disturbed,
// and interleaving exposes both to the same disturbances).
double memcpy_ratio(Case& c, std::uint64_t calls) {
  static std::unique_ptr<AlignedBuffer> src, dst;
  const std::uint64_t bytes = c.output_bytes;
  if (!src || src->size() < bytes) {
    src = std::make_unique<AlignedBuffer>(bytes, 0x11);
    dst = std::make_unique<AlignedBuffer>(bytes, 0x22);
  }
  double op = 1e30, copy = 1e30;
  for (int round = 0; round < 5; ++round) {
    op = std::min(op, seconds_per_call([&] { c.call(c); }, calls));
    copy = std::min(copy, seconds_per_call(
                              [&] { std::memcpy(dst->data(), src->data(), bytes); }, calls));
  }
  return copy / op;
}

// One shape's ratios. Google Benchmark first runs a benchmark with fewer iterations to pick the
// count; only the runs with the most iterations (the one it reports, and its repetitions) count.
struct ShapeRatios {
  benchmark::IterationCount iterations = 0;
  std::vector<double> runs;
};

// The ratios of each class's shapes, by thread setting (0: one thread, 1: all) and shape.
std::map<std::string, std::array<std::map<int, ShapeRatios>, 2>>& ratios() {
  static std::map<std::string, std::array<std::map<int, ShapeRatios>, 2>> r;
  return r;
}

// Runs one case; a matrix shape records its ratio as shape `shape` of class `record`.
void run_case(benchmark::State& state, const Factory& make, bool all_threads,
              const std::string& record, int shape) {
  const std::unique_ptr<Case> c = make();
  dmlref::set_num_threads(all_threads ? 0 : 1);
  c->call(*c);  // first touch, and the pool started, outside the timing
  for (auto _ : state) {
    c->call(*c);
    benchmark::ClobberMemory();
  }
  const auto n = static_cast<std::uint64_t>(state.iterations());
  const double ratio = memcpy_ratio(*c, std::clamp<std::uint64_t>(n / 5, 1, 20));
  dmlref::set_num_threads(0);
  // Not bench::set_bytes_processed: its memcpy_ratio (memcpy timed on its own, a fresh 0.2 s for
  // each new byte count) would replace the interleaved one.
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(c->output_bytes));
  state.counters["memcpy_ratio"] = ratio;
  state.SetLabel(c->label());
  state.counters["threads"] = all_threads ? dmlref::get_num_threads() : 1;
  if (!record.empty()) {
    ShapeRatios& r = ratios()[record][all_threads ? 1 : 0][shape];
    if (state.iterations() > r.iterations) r = {state.iterations(), {}};
    if (state.iterations() == r.iterations) r.runs.push_back(ratio);
  }
}

// The minimum and the median over a class's shapes of each shape's ratio (the median of its
// repetitions).
void summary(benchmark::State& state, const std::string& name) {
  for (auto _ : state) benchmark::DoNotOptimize(name.data());
  for (const bool all : {false, true}) {
    std::vector<double> v;
    for (const auto& [shape, r] : ratios()[name][all ? 1 : 0]) {
      v.push_back(dmlref::bench::median(r.runs));
    }
    const std::string suffix = all ? "_all" : "_1t";
    state.counters["min" + suffix] = v.empty() ? 0 : *std::min_element(v.begin(), v.end());
    state.counters["median" + suffix] = dmlref::bench::median(v);
  }
}

[[maybe_unused]] const bool kRegistered = [] {
  const std::uint64_t bytes = env_or("DMLREF_BENCH_MATRIX_MIB", 16) << 20;
  const int shapes = static_cast<int>(env_or("DMLREF_BENCH_MATRIX_SHAPES", 6));
  for (const Class& k : classes()) {
    for (int s = 0; s < shapes; ++s) {
      const Factory make = [k, s, bytes] {
        Draw d{std::mt19937(36000u + static_cast<unsigned>(s) * 7919u +
                            static_cast<unsigned>(std::hash<std::string>{}(k.name) % 1000)),
               bytes};
        return k.make(d, s);
      };
      for (const bool all : {false, true}) {
        const std::string name = std::string("matrix/") + k.name + "/" + std::to_string(s) +
                                 (all ? "/threads:all" : "/threads:1");
        benchmark::RegisterBenchmark(name.c_str(), [make, all, k, s](benchmark::State& st) {
          run_case(st, make, all, k.name, s);
        })->UseRealTime()->MinTime(0.1);
      }
    }
    const std::string name = k.name;
    benchmark::RegisterBenchmark(("matrix/" + name + "/summary").c_str(),
                                 [name](benchmark::State& st) { summary(st, name); })
        ->Iterations(1);
  }
  for (const Class& k : classes()) {
    if (!k.peers) continue;
    for (const std::uint64_t mib : {16u, 256u}) {
      const Factory make = [k, mib] { return k.peers(mib << 20); };
      for (const bool all : {false, true}) {
        const std::string name = std::string("peers/") + k.name + "/" + std::to_string(mib) +
                                 (all ? "/threads:all" : "/threads:1");
        benchmark::RegisterBenchmark(name.c_str(), [make, all](benchmark::State& st) {
          run_case(st, make, all, "", 0);
        })->UseRealTime()->MinTime(0.1);
      }
    }
  }
  return true;
}();

}  // namespace
