// The layouts a GPU test harness calls most, through the runtime entry points (what such a
// harness calls), float32, against memcpy of the same output bytes in the same process. Cases
// (bytes = output bytes):
//   join_axis0 / split_axis0       {rows, 256} halves along axis 0
//   join_inner64 / split_inner64   four pieces along the last axis, 64-byte rows each
//   join_transposed                one input {rows, 256} stored column-major (strides {1, rows})
//   reverse_axis0                  {rows, 256} along axis 0, every length = rows (full)
//   reverse_inner                  {rows, 256} along axis 1, lengths uniform in [0, 256]
//   gather256 / gather64           rows of 256 / 64 bytes gathered by a random permutation
//   scatter_axis1                  {rows, 256} along axis 1, each row's indices a permutation
#include "bench_baseline.hpp"

#include <dmlref/dmlref.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include <emmintrin.h>

namespace {

using dmlref::BufferTensorDesc;
using dmlref::DataType;
using dmlref::TensorDesc;
using dmlref::bench::AlignedBuffer;

constexpr std::uint32_t kRow = 256;  // elements per row of the {rows, 256} cases

std::uint32_t rows_of(std::int64_t bytes, std::uint32_t row_elements) {
  return static_cast<std::uint32_t>(bytes / 4 / row_elements);
}

void join_split(benchmark::State& state, bool join, std::uint32_t pieces, std::uint32_t axis,
                std::uint32_t piece_elements) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::uint32_t whole_row = axis == 0 ? kRow : pieces * piece_elements;
  const std::uint32_t rows = rows_of(state.range(0), whole_row);
  const TensorDesc whole(DataType::Float32, {rows, whole_row});
  const std::vector<std::uint32_t> piece_sizes =
      axis == 0 ? std::vector<std::uint32_t>{rows / pieces, kRow}
                : std::vector<std::uint32_t>{rows, piece_elements};
  const TensorDesc piece(DataType::Float32, piece_sizes);
  std::vector<BufferTensorDesc> piece_descs(pieces, piece.desc());
  const BufferTensorDesc whole_desc = whole.desc();
  AlignedBuffer whole_buffer(bytes);
  std::vector<std::unique_ptr<AlignedBuffer>> piece_buffers;
  std::vector<dmlref::ConstBuffer> in;
  std::vector<dmlref::Buffer> out;
  for (std::uint32_t i = 0; i < pieces; ++i) {
    piece_buffers.push_back(std::make_unique<AlignedBuffer>(bytes / pieces));
    in.push_back({piece_buffers.back()->data(), bytes / pieces});
    out.push_back({piece_buffers.back()->data(), bytes / pieces});
  }
  const dmlref::JoinOperatorDesc jd{pieces, piece_descs.data(), &whole_desc, axis};
  const dmlref::SplitOperatorDesc sd{&whole_desc, pieces, piece_descs.data(), axis};
  for (auto _ : state) {
    if (join) {
      dmlref::join(jd, in, {whole_buffer.data(), bytes});
    } else {
      dmlref::split(sd, {whole_buffer.data(), bytes}, out);
    }
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

void join_transposed(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::uint32_t rows = rows_of(state.range(0), kRow);
  const TensorDesc input(DataType::Float32, {rows, kRow}, {1, rows});
  const TensorDesc output(DataType::Float32, {rows, kRow});
  const BufferTensorDesc in_desc = input.desc(), out_desc = output.desc();
  AlignedBuffer src(bytes), dst(bytes);
  const dmlref::JoinOperatorDesc jd{1, &in_desc, &out_desc, 1};
  for (auto _ : state) {
    dmlref::join(jd, {{src.data(), bytes}}, {dst.data(), bytes});
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

// join_transposed's bytes moved the simplest register-blocked way, with no dmlref: SSE2 4 x 4
// transposes (dst row i, columns j..j+3 from four source columns) in 16 x 16 tiles, rows of
// tiles outermost. What a transpose of this layout costs on this machine without the engine.
void bare_transposed(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t rows = rows_of(state.range(0), kRow);
  AlignedBuffer src_buffer(bytes), dst_buffer(bytes);
  const auto* src = src_buffer.as<std::uint32_t>();  // element (i, j) at i + j * rows
  auto* dst = dst_buffer.as<std::uint32_t>();         // element (i, j) at i * kRow + j
  for (auto _ : state) {
    for (std::size_t i0 = 0; i0 < rows; i0 += 16) {
      for (std::size_t j0 = 0; j0 < kRow; j0 += 16) {
        for (std::size_t i = i0; i < i0 + 16; i += 4) {
          for (std::size_t j = j0; j < j0 + 16; j += 4) {
            const auto column = [&](std::size_t k) {
              return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + (j + k) * rows));
            };
            const __m128i c0 = column(0), c1 = column(1), c2 = column(2), c3 = column(3);
            const __m128i t0 = _mm_unpacklo_epi32(c0, c1), t1 = _mm_unpackhi_epi32(c0, c1);
            const __m128i t2 = _mm_unpacklo_epi32(c2, c3), t3 = _mm_unpackhi_epi32(c2, c3);
            const auto row = [&](std::size_t k, __m128i v) {
              _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (i + k) * kRow + j), v);
            };
            row(0, _mm_unpacklo_epi64(t0, t2));
            row(1, _mm_unpackhi_epi64(t0, t2));
            row(2, _mm_unpacklo_epi64(t1, t3));
            row(3, _mm_unpackhi_epi64(t1, t3));
          }
        }
      }
    }
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

// The simplest loop moving join_inner64's (or, with `join` false, split_inner64's) bytes in the
// same order as the engine, with no dmlref: per row of the whole, each piece's 64 bytes.
void bare_inner64(benchmark::State& state, bool join) {
  constexpr std::size_t kPieces = 4, kRun = 64;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t rows = bytes / (kPieces * kRun);
  AlignedBuffer whole_buffer(bytes);
  std::vector<std::unique_ptr<AlignedBuffer>> piece_buffers;
  for (std::size_t i = 0; i < kPieces; ++i) {
    piece_buffers.push_back(std::make_unique<AlignedBuffer>(bytes / kPieces));
  }
  auto* whole = reinterpret_cast<unsigned char*>(whole_buffer.data());
  for (auto _ : state) {
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < kPieces; ++i) {
        unsigned char* w = whole + (r * kPieces + i) * kRun;
        auto* p = reinterpret_cast<unsigned char*>(piece_buffers[i]->data()) + r * kRun;
        if (join) {
          std::memcpy(w, p, kRun);
        } else {
          std::memcpy(p, w, kRun);
        }
      }
    }
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

void reverse(benchmark::State& state, std::uint32_t axis) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::uint32_t rows = rows_of(state.range(0), kRow);
  const TensorDesc data(DataType::Float32, {rows, kRow});
  const TensorDesc lengths(DataType::UInt32, axis == 0 ? std::vector<std::uint32_t>{1, kRow}
                                                       : std::vector<std::uint32_t>{rows, 1});
  const BufferTensorDesc data_desc = data.desc(), lengths_desc = lengths.desc();
  AlignedBuffer src(bytes), dst(bytes);
  const std::uint32_t count = axis == 0 ? kRow : rows;
  AlignedBuffer length_buffer(count * 4);
  std::mt19937 rng(12);
  for (std::uint32_t i = 0; i < count; ++i) {
    length_buffer.as<std::uint32_t>()[i] = axis == 0 ? rows : rng() % (kRow + 1);
  }
  const dmlref::ReverseSubsequencesOperatorDesc rd{&data_desc, &lengths_desc, &data_desc, axis};
  for (auto _ : state) {
    dmlref::reverse_subsequences(rd, {src.data(), bytes}, {length_buffer.data(), count * 4},
                                 {dst.data(), bytes});
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

void gather(benchmark::State& state, std::uint32_t row_bytes) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::uint32_t row = row_bytes / 4;
  const std::uint32_t rows = rows_of(state.range(0), row);
  const TensorDesc data(DataType::Float32, {rows, row});
  const TensorDesc indices(DataType::UInt32, {rows, 1});
  const BufferTensorDesc data_desc = data.desc(), indices_desc = indices.desc();
  AlignedBuffer src(bytes), dst(bytes), index_buffer(std::size_t{rows} * 4);
  std::uint32_t* ix = index_buffer.as<std::uint32_t>();
  std::iota(ix, ix + rows, 0u);
  std::shuffle(ix, ix + rows, std::mt19937(12));
  const dmlref::GatherNd1OperatorDesc gd{&data_desc, &indices_desc, &data_desc, 2, 2, 0};
  for (auto _ : state) {
    dmlref::gather_nd1(gd, {src.data(), bytes}, {index_buffer.data(), index_buffer.size()},
                       {dst.data(), bytes});
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

// scatter_axis1's indices: each of the `rows` rows of kRow a random permutation of [0, kRow).
void fill_row_permutations(std::uint32_t* ix, std::uint32_t rows) {
  std::mt19937 rng(12);
  for (std::uint32_t r = 0; r < rows; ++r) {
    std::iota(ix + std::size_t{r} * kRow, ix + std::size_t{r + 1} * kRow, 0u);
    std::shuffle(ix + std::size_t{r} * kRow, ix + std::size_t{r + 1} * kRow, rng);
  }
}

void scatter_axis1(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::uint32_t rows = rows_of(state.range(0), kRow);
  const TensorDesc data(DataType::Float32, {rows, kRow});
  const TensorDesc indices(DataType::UInt32, {rows, kRow});
  const BufferTensorDesc data_desc = data.desc(), indices_desc = indices.desc();
  AlignedBuffer src(bytes), updates(bytes), dst(bytes), index_buffer(bytes);
  std::uint32_t* ix = index_buffer.as<std::uint32_t>();
  fill_row_permutations(ix, rows);
  const dmlref::ScatterOperatorDesc sd{&data_desc, &indices_desc, &data_desc, &data_desc, 1};
  for (auto _ : state) {
    dmlref::scatter(sd, {src.data(), bytes}, {index_buffer.data(), bytes},
                    {updates.data(), bytes}, {dst.data(), bytes});
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

// ---- bare loops: the same bytes in the same pattern, without dmlref -----------------------------
// The simplest loop a person would write for each indexed case (memcpy per row, a plain loop per
// element), with no validation: what the layout costs on this machine by itself.

// {rows, 256} rows copied whole in reverse row order, in output order.
void bare_reverse_axis0(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::uint32_t rows = rows_of(state.range(0), kRow);
  AlignedBuffer src(bytes), dst(bytes);
  const std::size_t row_bytes = kRow * 4;
  for (auto _ : state) {
    for (std::uint32_t a = 0; a < rows; ++a) {
      std::memcpy(dst.data() + a * row_bytes, src.data() + (rows - 1 - a) * row_bytes, row_bytes);
    }
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

// Each row's first L elements reversed (std::reverse_copy), the rest copied (memcpy).
void bare_reverse_inner(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::uint32_t rows = rows_of(state.range(0), kRow);
  AlignedBuffer src(bytes), dst(bytes);
  std::vector<std::uint32_t> lengths(rows);
  std::mt19937 rng(12);
  for (std::uint32_t& l : lengths) l = rng() % (kRow + 1);
  for (auto _ : state) {
    for (std::uint32_t r = 0; r < rows; ++r) {
      const std::uint32_t* in = src.as<std::uint32_t>() + std::size_t{r} * kRow;
      std::uint32_t* out = dst.as<std::uint32_t>() + std::size_t{r} * kRow;
      std::reverse_copy(in, in + lengths[r], out);
      std::memcpy(out + lengths[r], in + lengths[r], (kRow - lengths[r]) * 4);
    }
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

// Rows of RowBytes gathered by a random permutation: one fixed-size memcpy per row.
template <std::size_t RowBytes>
void bare_gather(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::uint32_t rows = rows_of(state.range(0), RowBytes / 4);
  AlignedBuffer src(bytes), dst(bytes);
  std::vector<std::uint32_t> ix(rows);
  std::iota(ix.begin(), ix.end(), 0u);
  std::shuffle(ix.begin(), ix.end(), std::mt19937(12));
  for (auto _ : state) {
    for (std::uint32_t i = 0; i < rows; ++i) {
      std::memcpy(dst.data() + std::size_t{i} * RowBytes,
                  src.data() + std::size_t{ix[i]} * RowBytes, RowBytes);
    }
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

// output = input (memcpy), then each row's updates stored where its permutation says.
void bare_scatter_axis1(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::uint32_t rows = rows_of(state.range(0), kRow);
  AlignedBuffer src(bytes), updates(bytes), dst(bytes), index_buffer(bytes);
  std::uint32_t* ix = index_buffer.as<std::uint32_t>();
  fill_row_permutations(ix, rows);
  const std::uint32_t* up = updates.as<std::uint32_t>();
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    std::uint32_t* out = dst.as<std::uint32_t>();
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t j = 0; j < kRow; ++j) out[r * kRow + ix[r * kRow + j]] = up[r * kRow + j];
    }
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

bool table_size(std::int64_t bytes) {
  return bytes == (1 << 20) || bytes == (16 << 20) || bytes == (256 << 20);
}

[[maybe_unused]] const bool kRegistered = [] {
  using dmlref::bench::register_sized;
  benchmark::internal::Benchmark* m =
      benchmark::RegisterBenchmark("memcpy", dmlref::bench::memcpy_baseline);
  for (std::int64_t bytes : dmlref::bench::all_byte_sizes()) {
    if (table_size(bytes)) m->Arg(bytes);
  }
  const auto sized = [](const char* name, auto run) {
    benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(name, run);
    for (std::int64_t bytes : dmlref::bench::all_byte_sizes()) {
      if (table_size(bytes)) b->Arg(bytes);
    }
  };
  sized("join_axis0/float32", [](benchmark::State& s) { join_split(s, true, 2, 0, kRow); });
  sized("split_axis0/float32", [](benchmark::State& s) { join_split(s, false, 2, 0, kRow); });
  sized("join_inner64/float32", [](benchmark::State& s) { join_split(s, true, 4, 1, 16); });
  sized("split_inner64/float32", [](benchmark::State& s) { join_split(s, false, 4, 1, 16); });
  sized("join_transposed/float32", join_transposed);
  sized("reverse_axis0/float32", [](benchmark::State& s) { reverse(s, 0); });
  sized("reverse_inner/float32", [](benchmark::State& s) { reverse(s, 1); });
  sized("gather256/float32", [](benchmark::State& s) { gather(s, 256); });
  sized("gather64/float32", [](benchmark::State& s) { gather(s, 64); });
  sized("scatter_axis1/float32", scatter_axis1);
  sized("bare_join_inner64/float32", [](benchmark::State& s) { bare_inner64(s, true); });
  sized("bare_split_inner64/float32", [](benchmark::State& s) { bare_inner64(s, false); });
  sized("bare_join_transposed/float32", bare_transposed);
  sized("bare_reverse_axis0/float32", bare_reverse_axis0);
  sized("bare_reverse_inner/float32", bare_reverse_inner);
  sized("bare_gather256/float32", bare_gather<256>);
  sized("bare_gather64/float32", bare_gather<64>);
  sized("bare_scatter_axis1/float32", bare_scatter_axis1);
  return true;
}();

}  // namespace
