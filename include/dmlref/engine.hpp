// dmlref: the one data-movement engine. Every operator's fast path says what moves where as a
// plan, a plain trivially copyable value (fixed-size arrays of kMaxRank, no containers, nothing
// owned), and the engine executes it with elements as the unsigned integer of their width
// (visit_width, width_view): no allocation and nothing that throws on the executing path, and each
// path compiled once per width (4), never per data type (11).
//
//   CopyPlan (strided_copy.hpp)  runs of contiguous bytes, broadcast, reversed, transposed tiles
//   PiecesAlongAxis              blocks of one whole tensor along an axis (JOIN, SPLIT)
//   RowGather                    rows moved from offsets read out of an index tensor (GATHER_ND1)
//   ElementScatter               elements moved to offsets read out of an index tensor (SCATTER)
//   ScatterSlab                  SCATTER's output built a slab at a time: input, then updates
//   ReversedRuns                 runs reversed up to lengths read out of a tensor (REVERSE_...)
//
// Indices and lengths are the only values read as numbers, and the engine reads them itself only
// in the index passes that check them against the bounds an operator gives (SC8, G10), one of
// which also keeps SCATTER's places (NarrowedIndices); otherwise the operator passes a function,
// compiled per index type, that turns a chunk of them into offsets or lengths by the operator's
// rules (negative indices, clamping). The plain
// reference loops in ops/ stay the definition of correct; tests/test_fastpath_*.cpp diff every
// plan path against them.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "dmlref/engine_simd.hpp"
#include "dmlref/indices.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/mapping.hpp"
#include "dmlref/strided_copy.hpp"
#include "dmlref/tensor_desc.hpp"
#include "dmlref/tensor_view.hpp"

namespace dmlref::detail {

static_assert(std::is_trivially_copyable_v<CopyPlan>);

// Index-driven plans read their indices this many at a time into a local array, then move the
// elements: each step is a tight loop, and neither is compiled per pair of types.
inline constexpr std::uint64_t kIndexChunk = 256;

// Calls f(o, start, count) for every chunk of at most kIndexChunk elements of every innermost run
// of a three-operand walk: o the run's offsets (from `base`, a part's place in the whole walk:
// for_each_plan_part), start the chunk's first position in the run. An f that returns bool stops
// the walk by returning true (call_until).
template <class F>
void walk_index_chunks(const CopyPlan& walk, F&& f, const PlanBase& base = {}) {
  const std::uint64_t n = walk.inner_size();
  walk_runs<3>(walk, [&](const std::array<std::int64_t, 3>& o) {
    for (std::uint64_t c0 = 0; c0 < n; c0 += kIndexChunk) {
      const auto start = static_cast<std::int64_t>(c0);
      if (call_until(f, o, start, std::min(kIndexChunk, n - c0))) return true;
    }
    return false;
  }, base);
}

// ---- blocks: pieces of one whole tensor along an axis ------------------------------------------

// One piece: its elements and its layout.
struct PieceRef {
  const void* data = nullptr;
  const Layout* layout = nullptr;
};

// The pieces of one whole tensor along an axis: piece i and the whole's block that starts base_i
// elements along the axis (the sum of the earlier pieces' sizes there) and has piece i's sizes.
// Pieces are reached through `at`, so typed views and bound runtime tensors share one copy per
// element width without building a list.
struct PiecesAlongAxis {
  const void* whole = nullptr;  // JOIN's output, SPLIT's input
  const Layout* whole_layout = nullptr;
  std::uint32_t axis = 0;
  bool into_whole = false;  // JOIN: each piece is copied into its block; SPLIT: the other way
  std::size_t count = 0;
  const void* pieces = nullptr;
  PieceRef (*at)(const void* pieces, std::size_t i) = nullptr;
};
static_assert(std::is_trivially_copyable_v<PiecesAlongAxis>);

// `at` over a std::span<const View> (typed views) or a std::span<const BoundTensor>.
template <class View>
PieceRef piece_of_views(const void* views, std::size_t i) {
  const View& v = (*static_cast<const std::span<const View>*>(views))[i];
  return {v.data(), &v.layout()};
}
inline PieceRef piece_of_bound(const void* bound, std::size_t i) {
  const BoundTensor& b = (*static_cast<const std::span<const BoundTensor>*>(bound))[i];
  return {b.data, &b.tensor.layout};
}

// At most this many blocks are copied side by side (the rest of copy_pieces' comment says how).
inline constexpr std::size_t kBlockGroup = 16;

// Bytes copy_block_runs moves of one block before the next block's (whole runs, at least one):
// 4 rows of 64 bytes measured as fast as one (each piece is still read in order), 8 or more
// slower; runs of 16 bytes one at a time were 20% slower than in batches. At most 8 runs: rows
// a power-of-two stride apart share one set of the 8-way L1 cache, and more evict each other
// before the group's next block completes their lines (4096 pieces of 4 bytes: 2x slower).
inline constexpr std::uint64_t kBlockRunBatchBytes = 256;

// Runs that go one block after another (copy_block_runs) call memcpy from this size; shorter
// ones are copied inline (copy_bytes_short), 64 bytes at a time. Runs of one size copied on
// their own favour memcpy from about 256 bytes (kMemcpyMinRunBytes, 128, is where the two tie),
// but between runs of other blocks its call and size dispatch cost more: JOIN of 100, 64, 100,
// 33 and 3 float32 (runs of 12 to 400 bytes; 16 MiB, one core) 0.78 of memcpy with memcpy from
// 128 bytes, 1.12 with it from 1 KiB; 400 and 3 float32 0.66-0.69 from 1 KiB, 1.03 from 4 KiB;
// 700 and 5 1.03 from 1 KiB, 0.89 from 4 KiB.
inline constexpr std::size_t kBlockRunMemcpyMinBytes = 2048;

// Where every block's positions lie at most kDenseBlockRowBytes apart on both sides (pieces a
// few elements wide, joined into or split from rows of up to 64 bytes), a batch's positions
// share lines and no L1 set fills: a block takes up to kDenseBatchBytes of runs spanning up to
// kDenseBatchSpanBytes of either side before the next block. 16 MiB, one core, of memcpy:
// SPLIT of float32 into 5 pieces one element wide 0.24 -> 0.34; JOIN of 5 and 5 float32
// 0.74 -> 0.97, 3 and 7 0.70 -> 0.94 (a budget of 256 bytes, at most 8 positions, before).
// The same batches serve blocks whose runs lie back to back in their destinations (a SPLIT into
// packed pieces), whatever their rows: a block's batch completes its own lines. With batches of
// kBlockRunBatchBytes, a SPLIT into float32 pieces 24, 5 and 24 wide went one position at a time
// and took 1.53-1.65 ms (16 MiB, one core) where numpy had placed the first and third pieces
// 4 KiB more or less than 7.5 MiB apart, against 0.81 with them 9 MiB apart; 0.69-0.82 either
// way now.
inline constexpr std::uint64_t kDenseBlockRowBytes = 64;
inline constexpr std::uint64_t kDenseBatchBytes = 1024;
inline constexpr std::uint64_t kDenseBatchSpanBytes = 2048;
inline constexpr std::uint64_t kDenseBatchMaxPositions = 256;

// A JOIN's runs stream straight to the output a batch of positions at a time
// (BlockStores::Streamed) only if they are whole lines or this wide (rows back to back stream in
// row order instead, kStreamedRowsMinRunBytes). Narrower ones write each line in parts that come
// from different blocks a batch apart, which even the AMD core here (stream_unit() 16) wrote to
// memory part by part: 16 MiB of four float32 pieces 4 wide, one core: 2.8 ms streamed, 0.66-0.70
// with ordinary stores; two pieces 8 wide 1.22-1.28 against 0.53-0.56; pieces 16 wide, rows of 64
// bytes: 0.53-0.58 streamed, 0.85-0.97 ordinary. Runs of one line off a line did so now and then:
// four pieces 16 float32 wide, 256 MiB, output 16 bytes past a line (numpy's placement), one core,
// 20 calls each: 17-21 ms a call in some processes, 86-132 in others and within one, against 26-45
// staged (torch.cat 23-38); runs of 128 bytes and more streamed 16-22 ms in every process (staged
// 24-48).
inline constexpr std::uint64_t kJoinStreamRunMinBytes = 128;

// A JOIN into rows back to back whose runs start and end on stream_unit() boundaries streams
// them in row order (BlockStores::StreamedRows) where they average at least this many bytes:
// each run is then a few streaming stores that continue the last, and the work per run is small
// beside them. AMD, one core, float32 pieces, output 16 bytes past a line, memcpy's time over
// the JOIN's (staged, or straight in batches, against row order): four runs of 64 bytes,
// 256 MiB 0.64-0.70 -> 0.96-0.98, 16 MiB 1.37-1.55 -> 1.79-1.92; 96, 16 and 96 bytes 0.75 ->
// 1.04 and 1.03 -> 1.38; 64 and 16 (40 on average) 0.65 -> 0.80 and 1.00 -> 1.12; runs of 128
// to 1024 bytes level (0.86-1.00 either way). Narrower runs lose at 16 MiB (four of 32 bytes
// 0.93 -> 0.69, four of 16 1.49 -> 0.84; at 256 MiB 0.48 -> 0.86 and 0.65 -> 0.53) and stay
// staged. Runs off those boundaries (BlockStores::ShiftedRows) keep the same floor: below it they
// lost to the stage at both sizes (three of 24 bytes, 16 MiB 0.84 -> 1.34 ms, 256 MiB 20.5 ->
// 21.9; 16 and 32 bytes, 256 MiB 16.9 -> 24.4).
inline constexpr std::uint64_t kStreamedRowsMinRunBytes = 40;

// A JOIN's rows of fewer bytes take ordinary stores rather than a StagedStream (BlockStores):
// each staged row is a few narrow stores into the stage, read back at once as wider lines. AMD,
// 16 MiB, one core: pieces 3 and 3 float32 wide (rows of 24 bytes) 1.07 ms staged against 0.82,
// 2 and 2 1.10 against 0.84; from 32 bytes level or ahead (1 and 7: 0.75-0.82 against
// 0.72-0.76, and 14.5-14.9 against 16.2-16.7 at 256 MiB).
inline constexpr std::uint64_t kStagedJoinRowMinBytes = 32;

// Where at least this many blocks read runs out of one wider row (SPLIT into many pieces), the
// reads jump back and forth across rows and no hardware prefetcher follows them: each block then
// asks for its runs kBlockRunAheadPositions positions ahead. bench_table's matrix/split_rows64/1
// (16 MiB of 8-byte elements into 8 pieces of 64-byte rows, one core): 0.24-0.30 of memcpy
// without, 0.67-0.88 with. More pieces gain more (16: 0.28 to 0.65-0.75); with 2 or 4 pieces it
// cost about 8%, so fewer blocks go without.
inline constexpr std::size_t kBlockRunPrefetchBlocks = 8;
inline constexpr std::int64_t kBlockRunAheadPositions = 16;

// One block of a piece copy as bytes: at each position of the dimensions before the axis (the
// outer ones), one contiguous run of `run_bytes` from src + src_offset to dst + dst_offset.
// Steps are bytes per step of each outer dimension.
struct BlockRun {
  const unsigned char* src = nullptr;
  unsigned char* dst = nullptr;
  std::uint64_t run_bytes = 0;
  std::array<std::int64_t, kMaxRank> src_step{};
  std::array<std::int64_t, kMaxRank> dst_step{};
};

// The element count of dimensions [from, rank) of `layout` when they address one ascending run
// of neighbouring elements (size-1 dimensions ignored), otherwise 0.
inline std::uint64_t contiguous_tail(const Layout& layout, std::uint32_t from) noexcept {
  std::uint64_t n = 1;
  for (std::uint32_t d = layout.rank; d-- > from;) {
    if (layout.sizes[d] == 1) continue;
    if (layout.strides[d] != static_cast<std::int64_t>(n)) return 0;
    n *= layout.sizes[d];
  }
  return n;
}

// A StreamStage and its StagedStream, for copy_block_runs' StagedRows.
struct StagedBuffers {
  StreamStage stage;
  StagedStream rows;
};

// How copy_block_runs writes its runs.
enum class BlockStores : std::uint8_t {
  Ordinary,
  Streamed,      // every run with streaming stores (each run streams_aligned)
  StreamedRows,  // the same in the whole's order: a JOIN's blocks tile rows back to back
  ShiftedRows,   // the same at any byte offset (AVX2 byte shuffles)
  StagedRows,    // JOIN: the blocks tile each position's row of the whole, rows back to back
};

// Copies the runs of `count` blocks for the outer positions [begin, end) (row-major over the
// outer dimensions `sizes`, `rank` of them), every block's run at one position before the next
// position's: the blocks' rows then stream through memory side by side, each source and
// destination read or written in order. Other than Ordinary `stores` stream (the caller
// fences): Streamed writes every run so; StagedRows copies a batch's runs into a StreamStage at
// their places relative to the batch's first (the destination is contiguous there), then streams
// the batch's rows through a StagedStream, at most kStageBytes at a time.
// kStaged: whether `stores` is StagedRows, with `staged` its buffers (else null); a separate
// instance, so the Ordinary and Streamed loops carry no staged branches.
template <bool kStaged>
void copy_block_runs(const BlockRun* blocks, std::size_t count,
                     const std::array<std::uint64_t, kMaxRank>& sizes, std::uint32_t rank,
                     std::uint64_t begin, std::uint64_t end, BlockStores stores,
                     StagedBuffers* staged) {
  // Everything the loop reads lives in locals, one block's fields side by side: the copies'
  // stores may alias anything else as far as the compiler knows, which would reload each field
  // after every run.
  struct Lane {
    const unsigned char* src;
    unsigned char* dst;
    std::int64_t src_at, dst_at;  // the current position's run, bytes from src and dst
    std::int64_t src_step, dst_step;  // along the innermost outer dimension
    std::uint64_t bytes;
    bool fetch;    // prefetched ahead (runs out of wider source rows, many blocks)
    bool batched;  // several positions in one copy_runs call (a size it copies as a constant)
  };
  std::array<Lane, kBlockGroup> lanes;
  std::array<std::uint64_t, kMaxRank> c{};
  std::uint64_t q = begin;  // begin's coordinates, row-major
  for (std::uint32_t d = rank; d-- > 0;) {
    c[d] = q % sizes[d];
    q /= sizes[d];
  }
  std::uint64_t widest = 1;
  std::uint64_t widest_step = 0;  // bytes between positions, the widest of either side's
  bool any_fetch = false;
  bool packed = true;  // every block's runs back to back in its destination (a SPLIT's pieces)
  for (std::size_t b = 0; b < count; ++b) {
    Lane& l = lanes[b];
    l = {blocks[b].src, blocks[b].dst, 0, 0, blocks[b].src_step[rank - 1],
         blocks[b].dst_step[rank - 1], blocks[b].run_bytes, false, false};
    for (std::uint32_t d = 0; d < rank; ++d) {
      l.src_at += static_cast<std::int64_t>(c[d]) * blocks[b].src_step[d];
      l.dst_at += static_cast<std::int64_t>(c[d]) * blocks[b].dst_step[d];
    }
    l.fetch = count >= kBlockRunPrefetchBlocks && l.src_step > static_cast<std::int64_t>(l.bytes);
    l.batched = copy_runs_size_is_constant(l.bytes);
    widest = std::max(widest, l.bytes);
    widest_step = std::max({widest_step, static_cast<std::uint64_t>(std::abs(l.src_step)),
                            static_cast<std::uint64_t>(std::abs(l.dst_step))});
    any_fetch = any_fetch || l.fetch;
    packed = packed && l.dst_step == static_cast<std::int64_t>(l.bytes);
  }
  const std::uint64_t inner = sizes[rank - 1];
  const bool stream = stores != BlockStores::Ordinary;
  const bool staged_rows = kStaged && stores == BlockStores::StagedRows;
  const auto row_bytes = static_cast<std::uint64_t>(blocks[0].dst_step[rank - 1]);  // StagedRows
  // Staged batches fill the stage: each one's setup and flush cost as much as a few rows.
  const std::uint64_t batch =
      staged_rows
          ? std::clamp<std::uint64_t>(kStageBytes / row_bytes, 1, kDenseBatchMaxPositions)
      : widest_step <= kDenseBlockRowBytes || packed
          ? std::clamp<std::uint64_t>(std::min(kDenseBatchBytes / widest,
                                               kDenseBatchSpanBytes / widest_step),
                                      1, kDenseBatchMaxPositions)
          : std::clamp<std::uint64_t>(kBlockRunBatchBytes / widest, 1, 8);
  // Where a block's batch would be one or two positions (its widest run at least 86 bytes),
  // each position's runs go one block after another with nothing decided per run: the choices
  // below cost more than they gain there. JOIN of 33, 24 and 8 float32 (16 MiB, one core):
  // 0.62-0.66 of memcpy -> 0.75-0.79; 24, 5 and 24: 0.68-0.71 -> 0.83-0.85. With a batch of 8
  // (runs of 20 bytes) the batches win: 0.74-0.78 against 0.55.
  const bool one_at_a_time = !stream && !any_fetch && batch <= 2;
  const bool streamed_rows = stores == BlockStores::StreamedRows;
  const bool shifted_rows = stores == BlockStores::ShiftedRows;
#if DMLREF_ENGINE_AVX2
  bool short_runs = false;  // ShiftedRows: a run under 16 bytes (that kernel's branch for them)
  for (std::size_t b = 0; b < count; ++b) short_runs = short_runs || lanes[b].bytes < 16;
#endif
  // Those go to the end of the innermost outer dimension at each step, the others a batch.
  const std::uint64_t most_steps =
      streamed_rows || shifted_rows || one_at_a_time ? inner : batch;
  for (std::uint64_t i = begin; i < end;) {
    const std::uint64_t steps = std::min({end - i, inner - c[rank - 1], most_steps});
    if (streamed_rows || shifted_rows) {
      // Every store continues the one before, as a memcpy's do, and no ordinary store comes
      // between them: the lanes are only read until the range ends. (Written back after each
      // streamed run, the lanes made a JOIN of four 64-byte runs, 256 MiB, one AMD core, take
      // 17-20 ms a call in some processes and 40-50 in others.)
      unsigned char* to = lanes[0].dst + lanes[0].dst_at;  // the blocks' runs, back to back
      if (shifted_rows) {
#if DMLREF_ENGINE_AVX2
        std::array<ShiftedRowRun, kBlockGroup> runs;
        for (std::size_t b = 0; b < count; ++b) {
          runs[b] = {lanes[b].src + lanes[b].src_at, lanes[b].src_step, lanes[b].bytes};
        }
        if (short_runs) {
          stream_shifted_rows_avx2<true>(runs.data(), count, steps, to);
        } else {
          stream_shifted_rows_avx2<false>(runs.data(), count, steps, to);
        }
#endif
      } else {
        for (std::uint64_t r = 0; r < steps; ++r) {
          const auto at = static_cast<std::int64_t>(r);
          for (std::size_t b = 0; b < count; ++b) {
            const Lane& l = lanes[b];
            stream_aligned_run(to, l.src + l.src_at + at * l.src_step, l.bytes);
            to += l.bytes;
          }
        }
      }
      for (std::size_t b = 0; b < count; ++b) {
        lanes[b].src_at += static_cast<std::int64_t>(steps) * lanes[b].src_step;
        lanes[b].dst_at += static_cast<std::int64_t>(steps) * lanes[b].dst_step;
      }
    } else if (one_at_a_time) {
      for (std::uint64_t r = 0; r < steps; ++r) {
        for (std::size_t b = 0; b < count; ++b) {
          Lane& l = lanes[b];
          copy_one_run(l.src + l.src_at, l.dst + l.dst_at, l.bytes, kBlockRunMemcpyMinBytes);
          l.src_at += l.src_step;
          l.dst_at += l.dst_step;
        }
      }
    } else {
      // A few positions along the innermost outer dimension per block (a batch), so each
      // block's loop runs on registers; few enough that every piece still streams alongside the
      // others.
      const auto n = static_cast<std::int64_t>(steps);
      // StagedRows: the batch's rows, lanes[0]'s run first in each (the caller checks).
      unsigned char* const rows_at = lanes[0].dst + lanes[0].dst_at;
      unsigned char* const rows_stage =
          staged_rows ? staged->rows.begin(staged->stage, rows_at) : nullptr;
      for (std::size_t b = 0; b < count; ++b) {
        Lane& l = lanes[b];
        if (l.fetch) {
          // Integer addresses: positions past the end cost a wasted request at most (a
          // prefetch never faults), and no pointer is formed outside the tensor.
          const std::int64_t ahead = l.src_at + kBlockRunAheadPositions * l.src_step;
          for (std::int64_t r = 0; r < n; ++r) {
            prefetch_lines(reinterpret_cast<std::uintptr_t>(l.src) +
                               static_cast<std::uintptr_t>(ahead + r * l.src_step),
                           l.bytes);
          }
        }
        const unsigned char* const from = l.src + l.src_at;
        unsigned char* const dst_at = l.dst + l.dst_at;
        unsigned char* const to = staged_rows ? rows_stage + (dst_at - rows_at) : dst_at;
        if (stores == BlockStores::Streamed) {
          for (std::int64_t r = 0; r < n; ++r) {
            stream_aligned_run(to + r * l.dst_step, from + r * l.src_step, l.bytes);
          }
        } else if (l.batched && n > 1) {
          copy_runs(from, l.src_step, to, l.dst_step, steps, l.bytes);
        } else if (l.bytes < kMemcpyMinRunBytes) {
          // Inline, the size's class chosen once for the batch: for other sizes copy_runs'
          // call and size dispatch cost more than a narrow run.
          copy_short_runs(from, l.src_step, to, l.dst_step, steps, l.bytes);
        } else if (staged_rows || !l.fetch) {
          // Wider runs with copy_runs' inline loop, below kBlockRunMemcpyMinBytes: through
          // memcpy they went slower (SPLIT of 16 MiB into four pieces 33 float32 wide, batches
          // of 3 positions, one core: 1.85 ms against 1.06). Prefetched ones take memcpy (SPLIT
          // into 8 pieces of 132 or 200 bytes: 0.92 and 1.12 of memcpy, inline 0.83 and 1.01).
          // Into the stage every run goes inline, forward: glibc's memmove copied wide runs
          // into the stage backwards, against the source's prefetch from memory (JOIN of 256
          // and 3 float32, 256 MiB, one core: 30 ms so, 15.5 inline).
          copy_runs(from, l.src_step, to, l.dst_step, steps, l.bytes, 0,
                    staged_rows ? SIZE_MAX : kBlockRunMemcpyMinBytes);
        } else {
          for (std::int64_t r = 0; r < n; ++r) {
            std::memcpy(to + r * l.dst_step, from + r * l.src_step, l.bytes);
          }
        }
        l.src_at += n * l.src_step;
        l.dst_at += n * l.dst_step;
      }
      if (staged_rows) staged->rows.end(staged->stage, steps * row_bytes);
    }
    i += steps;
    c[rank - 1] += steps;
    // At the end of the innermost outer dimension, carry into the ones before it.
    if (c[rank - 1] < inner) continue;
    c[rank - 1] = 0;
    for (std::size_t b = 0; b < count; ++b) {
      lanes[b].src_at -= static_cast<std::int64_t>(inner) * lanes[b].src_step;
      lanes[b].dst_at -= static_cast<std::int64_t>(inner) * lanes[b].dst_step;
    }
    for (std::uint32_t d = rank - 1; d-- > 0;) {
      if (++c[d] < sizes[d]) {
        for (std::size_t b = 0; b < count; ++b) {
          lanes[b].src_at += blocks[b].src_step[d];
          lanes[b].dst_at += blocks[b].dst_step[d];
        }
        break;
      }
      c[d] = 0;
      const auto back = static_cast<std::int64_t>(sizes[d] - 1);
      for (std::size_t b = 0; b < count; ++b) {
        lanes[b].src_at -= back * blocks[b].src_step[d];
        lanes[b].dst_at -= back * blocks[b].dst_step[d];
      }
    }
  }
  if constexpr (kStaged) staged->rows.flush();
}

// A block copied whole with copy_view, by element width: the one part of copy_pieces that
// depends on the width (it picks the block's path: broadcast, transposed, strided...).
using CopyWholeBlockFn = void (*)(const void* src, const Layout& src_layout, void* dst,
                                  const Layout& dst_layout, bool stream);
template <class W>
void copy_whole_block(const void* src, const Layout& src_layout, void* dst,
                      const Layout& dst_layout, bool stream) {
  copy_view(TensorView<const W>(static_cast<const W*>(src), src_layout),
            TensorView<W>(static_cast<W*>(dst), dst_layout), stream);
}

// Every piece copied to or from its block, elements of `element_bytes` bytes.
// A block whose part of each outer position (the dimensions before the axis) is one contiguous
// run in both operands (the usual case) is not copied on its own: copied one after the other,
// blocks whose rows interleave in memory (any axis but the outermost) would each sweep the whole
// tensor, fetching every shared cache line once per block. Instead up to `group` such blocks
// move side by side, one outer position at a time (copy_block_runs), so the whole is read or
// written in order and each piece streams alongside. (The earlier order, 16 KiB slabs of all
// blocks one block at a time, read each piece a 4 KiB page at a time, which restarted the
// hardware prefetcher at every page: 2-3x slower for 64-byte rows.) More blocks than `group` go
// in slabs of about `slab_bytes` of every block's rows: each group's part of a slab in turn, so
// lines shared between groups are still cached when the next group completes them.
// Other blocks (transposed, broadcast, padded within the inner dimensions) are copied whole by
// `copy_whole` (copy_whole_block of the width). Everything else moves bytes, so this compiles
// once for every width. `slab_bytes` and `group` exist for the tests.
template <class Deferred = void>
inline void copy_pieces_of_width(const PiecesAlongAxis& p, std::size_t element_bytes,
                                 CopyWholeBlockFn copy_whole, std::uint64_t slab_bytes,
                                 std::size_t group) {
  const Layout& whole_layout = *p.whole_layout;
  const std::uint32_t axis = p.axis;
  const auto element = static_cast<std::int64_t>(element_bytes);
  auto* const whole = static_cast<unsigned char*>(const_cast<void*>(p.whole));
  // Piece i and its block, source first, given where its block starts along the axis.
  struct Block {
    std::array<unsigned char*, 2> data;
    std::array<Layout, 2> layout;
  };
  const auto block_of = [&](std::size_t i, std::int64_t base) {
    const PieceRef piece = p.at(p.pieces, i);
    Layout block = whole_layout;
    block.sizes[axis] = piece.layout->sizes[axis];
    unsigned char* const in_whole = whole + base * whole_layout.strides[axis] * element;
    auto* const own = static_cast<unsigned char*>(const_cast<void*>(piece.data));
    return p.into_whole ? Block{{own, in_whole}, {*piece.layout, block}}
                        : Block{{in_whole, own}, {block, *piece.layout}};
  };
  // The outer dimensions, shared by every block; size-1 ones dropped.
  std::array<std::uint64_t, kMaxRank> outer{};
  std::array<std::uint32_t, kMaxRank> outer_dim{};
  std::uint32_t outer_rank = 0;
  std::uint64_t positions = 1;
  for (std::uint32_t d = 0; d < axis; ++d) {
    if (whole_layout.sizes[d] == 1) continue;
    outer_dim[outer_rank] = d;
    outer[outer_rank++] = whole_layout.sizes[d];
    positions *= whole_layout.sizes[d];
  }
  // A block moved as runs: at least two blocks, rows that interleave (some outer position
  // besides the first), and dimensions [axis, rank) one contiguous run in both operands.
  const bool side_by_side = p.count >= 2 && positions >= 2;
  const std::uint64_t total_bytes = whole_layout.element_count() * element_bytes;
  // Threads take ranges of the outer positions of blocks moved as runs: where there are fewer
  // positions than the parts a copy of this size is split into, a block whose runs are a part
  // (parallel_part_bytes) or longer is copied whole instead, split among every thread by its
  // own copy: JOIN of {2, N} pieces along axis 1 would otherwise keep two threads busy however
  // many there are. (The size first: a small call does not look up the thread count.)
  const bool few_positions =
      side_by_side && positions < parallel_parts(total_bytes, ~std::uint64_t{0});
  const auto run_of = [&](const Block& b) -> std::uint64_t {
    if (!side_by_side) return 0;
    const std::uint64_t run = contiguous_tail(b.layout[0], axis);
    if (contiguous_tail(b.layout[1], axis) != run) return 0;
    return few_positions && run * element_bytes >= parallel_part_bytes ? 0 : run;
  };
  // Streaming is decided once, from the whole (the blocks partition it): each block may be
  // small, the whole not.
  const bool stream = total_bytes >= kStreamMinBytes;
  // One pass counts the blocks moved as runs and the bytes of the others (copied whole).
  std::uint64_t run_blocks = 0;      // blocks moved as runs
  std::uint64_t position_bytes = 0;  // their bytes at one outer position
  bool runs_units = true;  // every run streams_aligned, every step a stream_unit() multiple
  // In a JOIN, every run kJoinStreamRunMinBytes or more, or whole lines at every position.
  bool runs_wide = true;
  const auto unit = static_cast<std::int64_t>(stream_unit());
  std::uint64_t whole_blocks = 0, whole_bytes = 0, largest_whole_bytes = 0;
  std::int64_t base = 0;
  for (std::size_t i = 0; i < p.count; ++i) {
    const Block b = block_of(i, base);
    base += b.layout[0].sizes[axis];
    const std::uint64_t run = run_of(b);
    if (run == 0) {
      ++whole_blocks;
      const std::uint64_t bytes = b.layout[1].element_count() * element_bytes;
      whole_bytes += bytes;
      largest_whole_bytes = std::max(largest_whole_bytes, bytes);
    } else {
      const std::uint64_t bytes = run * element_bytes;
      ++run_blocks;
      position_bytes += bytes;
      bool lines = bytes % 64 == 0 && reinterpret_cast<std::uintptr_t>(b.data[1]) % 64 == 0;
      runs_units = runs_units && streams_aligned(b.data[1], bytes);
      for (std::uint32_t k = 0; k < outer_rank; ++k) {
        const std::int64_t step = b.layout[1].strides[outer_dim[k]] * element;
        runs_units = runs_units && step % unit == 0;
        lines = lines && step % 64 == 0;
      }
      runs_wide = runs_wide && (!p.into_whole || bytes >= kJoinStreamRunMinBytes || lines);
    }
  }
  if (whole_blocks != 0) {
    // With a block for every thread, none more than a thread's share of the bytes (JOIN or SPLIT
    // of many pieces along the outermost axis), threads take ranges of blocks, each copied on one
    // thread; otherwise the blocks go one after the other, each split between the threads by its
    // own copy: a thread given a large block alone would copy it while the others wait (a row
    // appended to 256 MiB along axis 0, two threads: no faster than one). (The size first: a
    // small call does not look up the thread count.)
    std::size_t parts = parallel_parts(whole_bytes, p.count);
    if (parts > 1) {
      const std::uint32_t threads = threads_for_call();
      if (whole_blocks < threads || largest_whole_bytes > whole_bytes / threads) parts = 1;
    }
    parallel_ranges(parts, p.count, [&](std::uint64_t first, std::uint64_t last) {
      std::int64_t at = 0;
      for (std::size_t i = 0; i < first; ++i) at += p.at(p.pieces, i).layout->sizes[axis];
      for (std::uint64_t i = first; i < last; ++i) {
        const Block b = block_of(static_cast<std::size_t>(i), at);
        at += b.layout[0].sizes[axis];
        if (run_of(b) == 0) copy_whole(b.data[0], b.layout[0], b.data[1], b.layout[1], stream);
      }
    });
  }
  if (run_blocks == 0) return;
  group = std::clamp<std::size_t>(group, 1, kBlockGroup);
  // Outer positions per slab: about slab_bytes of all blocks, but at least slab_bytes / 16 per
  // block on average, so describing every block once per slab stays cheap next to its copy
  // (thousands of narrow pieces then sweep the whole in a few slabs, group by group).
  const std::uint64_t rows =
      run_blocks <= group
          ? positions
          : std::max({std::uint64_t{1}, slab_bytes / position_bytes,
                      (slab_bytes / 16 * run_blocks + position_bytes - 1) / position_bytes});
  // In a streaming copy, every run streams or none does. JOIN writes a row of the whole from its
  // blocks' runs side by side, SPLIT each piece's rows one after another, so narrow runs fill
  // whole lines between them, but only if no run writes its part of a line with ordinary stores:
  // a line written both ways is evicted between them (JOIN of pieces 33, 24 and 8 float32 wide,
  // 64 MiB, one core: 0.14 of memcpy when the runs of 64 bytes or more streamed, 0.67 with
  // ordinary stores). So runs stream whole only where each starts and ends on a stream_unit()
  // boundary, and in a JOIN only runs that are whole lines or kJoinStreamRunMinBytes wide (its
  // comment has the measurements). A SPLIT's piece gets its runs one after another, its lines
  // whole in turn (256 MiB of four pieces 4 wide: 15.2-15.6 ms streamed, 18.0-18.8 with ordinary
  // stores; at 16 MiB 0.84-0.96 against 0.72-0.78, served from this host's 32 MiB L3).
  // Other runs that fill a contiguous destination between them are staged, a batch at a time
  // (StagedStream), where they are a JOIN of all its pieces into rows back to back of at least
  // kStagedJoinRowMinBytes (16 MiB of float32 pieces 24, 5 and 24 wide, one core: AMD 0.75-0.79 ms
  // with ordinary stores, 0.64-0.67 staged; on a Xeon, pieces of 64-byte rows into an output
  // 16 bytes past a line, numpy's placement: 6.8 ms streamed in parts, 2.1-2.6 with ordinary
  // stores, 1.4 staged, np.copyto 1.3). A SPLIT's pieces take ordinary stores there: staged, each
  // piece's runs a stream of their own, they ran behind on either core (AMD, 16 MiB into pieces
  // 5 and 5 wide: 0.84-0.86 ms against 0.62-0.66; 100, 64, 100, 33 and 3: 1.38-1.46 against
  // 0.69-0.77; Xeon, four pieces of 64-byte rows: 4.8 against 1.5). Before either, a JOIN into
  // rows back to back whose runs all start and end on stream_unit() boundaries streams them in
  // row order (kStreamedRowsMinRunBytes); where they do not, so does one whose CPU has AVX2's
  // byte shuffles (stream_shifted_rows_avx2): staged, such rows ran at half of memcpy's speed
  // (float32 pieces, output 16 bytes past a line, one core, ms: runs of 100 and 100 bytes,
  // 16 MiB 1.72 -> 0.93, 256 MiB 32.0 -> 19.9; 256 and 12, 1.58-2.01 -> 0.90-1.30 and 26-35 ->
  // 23-27; 132, 20 and 12, 1.9-2.3 -> 1.1-1.2 and 28-31 -> 22-23; 48 and 52 at 256 MiB 24-28 ->
  // 18-22; memcpy 1.0-1.6 and 16-20). Its stores go in address order, each line's in turn, as
  // memcpy's do, so it is not limited to stream_unit() 16.
  const std::int64_t row_step = whole_layout.strides[outer_dim[outer_rank - 1]] * element;
  const bool runs_aligned = runs_units && runs_wide;
  const bool rows_back_to_back = p.into_whole && whole_blocks == 0 && run_blocks <= group &&
                                 row_step == static_cast<std::int64_t>(position_bytes);
  const bool rows_streamed = rows_back_to_back && runs_units &&
                             position_bytes >= kStreamedRowsMinRunBytes * run_blocks;
  const bool rows_shifted = DMLREF_ENGINE_AVX2 && rows_back_to_back && !rows_streamed &&
                            position_bytes >= kStreamedRowsMinRunBytes * run_blocks &&
                            engine_avx2_enabled();
  const bool rows_staged = rows_back_to_back && position_bytes >= kStagedJoinRowMinBytes &&
                           position_bytes <= kStageBytes;
  const BlockStores stores = !stream         ? BlockStores::Ordinary
                             : rows_streamed ? BlockStores::StreamedRows
                             : rows_shifted  ? BlockStores::ShiftedRows
                             : runs_aligned  ? BlockStores::Streamed
                             : rows_staged   ? BlockStores::StagedRows
                                             : BlockStores::Ordinary;
  const bool staged = stores == BlockStores::StagedRows;
  const auto copy_runs_of = [&](const BlockRun* runs, std::size_t n, std::uint64_t begin,
                                std::uint64_t end) {
    if (staged) {
      // On this frame, not a thread-local: through the Python module a thread-local stage made
      // JOIN of pieces 24, 5 and 24 float32 (16 MiB) take 0.83 ms against 0.56.
      StagedBuffers buffers;
      copy_block_runs<true>(runs, n, outer, outer_rank, begin, end, stores, &buffers);
    } else {
      copy_block_runs<false>(runs, n, outer, outer_rank, begin, end, stores, nullptr);
    }
  };
  // Threads take consecutive ranges of outer positions: their rows are disjoint parts of every
  // block, so any split moves the same bytes.
  const std::size_t parts = parallel_parts(positions * position_bytes, positions);
  parallel_ranges(parts, positions, [&](std::uint64_t first, std::uint64_t last) {
    std::array<BlockRun, kBlockGroup> runs;
    for (std::uint64_t begin = first; begin < last; begin += rows) {
      const std::uint64_t end = std::min(last, begin + rows);
      std::size_t n = 0;
      std::int64_t at = 0;
      for (std::size_t i = 0; i < p.count; ++i) {
        const Block b = block_of(i, at);
        at += b.layout[0].sizes[axis];
        const std::uint64_t run = run_of(b);
        if (run == 0) continue;
        BlockRun& r = runs[n++];
        r.src = b.data[0];
        r.dst = b.data[1];
        r.run_bytes = run * element_bytes;
        for (std::uint32_t k = 0; k < outer_rank; ++k) {
          r.src_step[k] = b.layout[0].strides[outer_dim[k]] * element;
          r.dst_step[k] = b.layout[1].strides[outer_dim[k]] * element;
        }
        if (n == group) {
          copy_runs_of(runs.data(), n, begin, end);
          n = 0;
        }
      }
      if (n != 0) copy_runs_of(runs.data(), n, begin, end);
    }
    if (stream) stream_fence();
  });
}

// copy_pieces_of_width with elements as W.
template <class W>
void copy_pieces(const PiecesAlongAxis& p, std::uint64_t slab_bytes = kSlabBytes,
                 std::size_t group = kBlockGroup) {
  copy_pieces_of_width(p, sizeof(W), &copy_whole_block<W>, slab_bytes, group);
}

// ---- rows gathered by index --------------------------------------------------------------------

// How every row moves, chosen once per plan: one element; one contiguous run of a common small
// size (Fixed: constant-size copies, inlined); one run through copy_run (memcpy, short copy or
// strided loop by its length); one contiguous run streamed, when the output is far larger than
// the caches (as a copy that size would be); or the row's own plan.
enum class RowMove : std::uint8_t { Element, Fixed, Run, Stream, Plan };

// Rows sit at data-dependent places no hardware prefetcher predicts, so each is prefetched this
// many bytes of rows ahead of its move (at least kPrefetchTuples rows, at most kMaxPrefetchRows):
// short rows cost little to move, so they need more of them in flight to cover the latency.
// Rows of a 16 MiB random permutation: 4 KiB ahead instead of 2 KiB took bench_table's gather256
// from 0.75-0.76 to 0.81-0.88 of memcpy (same runs); for 64-byte rows 64 rows ahead was slower
// than 32, and 16 or 24 no faster.
inline constexpr std::uint64_t kPrefetchAheadBytes = 4096;
inline constexpr std::uint64_t kMaxPrefetchRows = 32;

// Rows gathered from the input at offsets read out of an index tensor. `grid` walks the rows with
// three operands: 0 the position of the row's indices, 1 a base input offset the indices add to,
// 2 the row's output offset. `row` is the plan of one row (operand 0 the input, 1 the output).
struct RowGather {
  CopyPlan grid;
  CopyPlan row;
  RowMove move = RowMove::Plan;
  std::uint64_t fetch_bytes = 0;  // prefetched per row, `ahead` rows before its move
  std::uint64_t ahead = kPrefetchTuples;
  std::uint64_t row_bytes = 0;  // of a contiguous row (Fixed, Run, Stream)
};
static_assert(std::is_trivially_copyable_v<RowGather>);

// Whether a contiguous row of `bytes` bytes moves as RowMove::Fixed (copy_fixed_rows has a copy
// of that size). At 256 bytes the 16-byte copies measured no faster than memcpy's wide ones
// (bench_table's gather256), so longer rows keep memcpy.
inline bool is_fixed_row_size(std::uint64_t bytes) noexcept {
  return bytes == 8 || bytes == 16 || bytes == 32 || bytes == 64 || bytes == 128;
}

// How a row is moved, from its plan: `output_bytes` (the whole output) decides streaming.
template <class Deferred = void>
inline RowGather plan_row_gather(const CopyPlan& grid, const CopyPlan& row,
                                 std::size_t element_bytes, std::uint64_t output_bytes) {
  RowGather plan{grid, row, RowMove::Plan, 0, kPrefetchTuples, 0};
  const std::uint64_t bytes = row.sizes[0] * element_bytes;
  const bool unit = row.strides[0][0] == 1 && row.strides[1][0] == 1;
  if (row.rank == 1 && row.sizes[0] == 1) {
    plan.move = RowMove::Element;
  } else if (row.rank == 1) {
    // Rows back to back in the output stream from kStreamMinPackedRunBytes (a loop over
    // precomputed offsets of 64-byte rows, 16 MiB: 0.36 of memcpy with ordinary stores,
    // 0.39-0.66 streamed).
    const bool packed = grid.rank != 0 && grid.inner_stride(2) == static_cast<std::int64_t>(
                                                                     row.sizes[0]);
    const bool stream = unit && output_bytes >= kStreamMinBytes &&
                        (bytes >= kStreamMinRunBytes ||
                         (packed && bytes >= kStreamMinPackedRunBytes));
    const bool fixed = unit && is_fixed_row_size(bytes);
    plan.move = stream ? RowMove::Stream : fixed ? RowMove::Fixed : RowMove::Run;
    plan.row_bytes = bytes;
  } else {
    plan.row = with_transpose_last(row);  // each row a copy_with_plan: reordered once, here
  }
  // Up to 4 KiB of each row is prefetched.
  const bool runs = plan.move != RowMove::Element && plan.move != RowMove::Plan;
  plan.fetch_bytes = runs && row.strides[0][0] == 1 ? std::min<std::uint64_t>(bytes, 4096) : 0;
  if (plan.fetch_bytes != 0) {
    plan.ahead = std::clamp(kPrefetchAheadBytes / plan.fetch_bytes, kPrefetchTuples,
                            kMaxPrefetchRows);
  }
  return plan;
}

// Rows of exactly Bytes contiguous bytes, row i from in + offsets[i] elements of `element_bytes`
// to out + i * out_step bytes, each prefetched `ahead` rows before. The size is a constant, so
// each copy is a few inlined 16-byte moves, with no call or size dispatch: what makes rows of 64
// bytes or less cheap. Bytes, not the element type, parameterises it, so all widths share it.
template <std::size_t Bytes>
void copy_fixed_rows(const unsigned char* in, const std::int64_t* offsets, std::uint64_t count,
                     unsigned char* out, std::int64_t out_step, std::size_t element_bytes,
                     std::uint64_t ahead) noexcept {
  const auto element = static_cast<std::int64_t>(element_bytes);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (i + ahead < count) prefetch_bytes(in + offsets[i + ahead] * element, Bytes);
    unsigned char* const d = out + static_cast<std::int64_t>(i) * out_step;
    const unsigned char* const s = in + offsets[i] * element;
    if constexpr (Bytes < 16) {
      std::memcpy(d, s, Bytes);
    } else {
      for (std::size_t k = 0; k < Bytes; k += 16) std::memcpy(d + k, s + k, 16);
    }
  }
}

// copy_fixed_rows for the row size is_fixed_row_size admitted.
template <class Deferred = void>
inline void copy_fixed_rows_of_size(std::uint64_t bytes, const unsigned char* in,
                                    const std::int64_t* offsets, std::uint64_t count,
                                    unsigned char* out, std::int64_t out_step,
                                    std::size_t element_bytes, std::uint64_t ahead) noexcept {
  switch (bytes) {
    case 8: return copy_fixed_rows<8>(in, offsets, count, out, out_step, element_bytes, ahead);
    case 16: return copy_fixed_rows<16>(in, offsets, count, out, out_step, element_bytes, ahead);
    case 32: return copy_fixed_rows<32>(in, offsets, count, out, out_step, element_bytes, ahead);
    case 64: return copy_fixed_rows<64>(in, offsets, count, out, out_step, element_bytes, ahead);
    default: return copy_fixed_rows<128>(in, offsets, count, out, out_step, element_bytes, ahead);
  }
}

// Whether streamed rows of `row_bytes` bytes, `step` bytes apart from `first`, all start and end
// on stream_unit() boundaries (a packed output of rows of a multiple of the unit, the usual case):
// then stream_aligned_rows moves them with no per-row alignment work.
inline bool stream_rows_aligned(const void* first, std::int64_t step,
                                std::uint64_t row_bytes) noexcept {
  return streams_aligned(first, row_bytes) &&
         step % static_cast<std::int64_t>(stream_unit()) == 0;
}

// Rows of `row_bytes` (a multiple of 16) from in + offsets[i] elements of `element_bytes` to
// out + i * out_step bytes (16-byte aligned), each prefetched `ahead` rows before, written with
// streaming stores 16 bytes at a time, inline: the per-row call and alignment work of
// copy_bytes_streaming were half the time of gathering 64-byte rows (16 MiB, perf).
template <class Deferred = void>
inline void stream_aligned_rows(const unsigned char* in, const std::int64_t* offsets,
                                std::uint64_t count, unsigned char* out, std::int64_t out_step,
                                std::size_t element_bytes, std::uint64_t row_bytes,
                                std::uint64_t fetch, std::uint64_t ahead) noexcept {
  const auto element = static_cast<std::int64_t>(element_bytes);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (fetch != 0 && i + ahead < count) prefetch_bytes(in + offsets[i + ahead] * element, fetch);
    stream_aligned_run(out + static_cast<std::int64_t>(i) * out_step, in + offsets[i] * element,
                       row_bytes);
  }
}

// Streamed packed rows of kStagedRowMinBytes to kStageBytes that are not on stream_unit()
// boundaries (numpy's outputs start 16 bytes past a line) go through a StagedStream, so the
// lines they fill together still stream whole. Xeon, one core, 16 MiB of 256-byte rows 16 bytes
// past a line: 3.2 ms streamed in parts, 1.9 row by row (each row's whole lines streamed, its
// ends with ordinary stores), 1.45 staged. Rows of 64 bytes took 15% longer staged than row by
// row.
inline constexpr std::uint64_t kStagedRowMinBytes = 128;

// Rows of `row_bytes` (at most kStageBytes) from in + offsets[i] elements of `element_bytes`,
// back to back from `out`, streamed through a StagedStream as many rows at a time as its stage
// holds. Each row goes into the stage with the inline forward copy, not memcpy (as in
// copy_block_runs' StagedRows).
template <class Deferred = void>
inline void stream_staged_rows(const unsigned char* in, const std::int64_t* offsets,
                               std::uint64_t count, unsigned char* out, std::size_t element_bytes,
                               std::uint64_t row_bytes, std::uint64_t fetch,
                               std::uint64_t ahead) noexcept {
  const auto element = static_cast<std::int64_t>(element_bytes);
  const std::uint64_t per_stage = kStageBytes / row_bytes;
  StreamStage stage;
  StagedStream stream;
  for (std::uint64_t i = 0; i < count;) {
    const std::uint64_t rows = std::min(per_stage, count - i);
    unsigned char* const staged = stream.begin(stage, out + i * row_bytes);
    for (std::uint64_t r = 0; r < rows; ++r, ++i) {
      if (fetch != 0 && i + ahead < count) prefetch_bytes(in + offsets[i + ahead] * element, fetch);
      copy_bytes_short(staged + r * row_bytes, in + offsets[i] * element, row_bytes);
    }
    stream.end(stage, rows * row_bytes);
  }
  stream.flush();
}

// The operator's index reader: the input offsets of `count` rows, row i's indices at position
// first + i * step, its base offset base + i * base_step.
using RowOffsetsFn = void (*)(const void* context, std::int64_t first, std::int64_t step,
                              std::int64_t base, std::int64_t base_step, std::uint64_t count,
                              std::int64_t* offsets);

// Executes a RowGather with elements as W: chunk by chunk, the rows' offsets, then the rows.
// Every loop copies what it uses into locals: store_bits's and memcpy's stores may alias
// anything, so values read through a closure would be reloaded after every element.
template <class W>
void gather_rows_part(const RowGather& plan, const PlanBase& base, const W* in, W* out,
                      RowOffsetsFn offsets_of, const void* context) {
  const std::int64_t ts = plan.grid.inner_stride(0);
  const std::int64_t bs = plan.grid.inner_stride(1);
  const std::int64_t os = plan.grid.inner_stride(2);
  walk_index_chunks(plan.grid, [&](const std::array<std::int64_t, 3>& o, std::int64_t start,
                                   std::uint64_t count) {
    std::array<std::int64_t, kIndexChunk> offsets;
    offsets_of(context, o[0] + start * ts, ts, o[1] + start * bs, bs, count, offsets.data());
    W* const d0 = out + (o[2] + start * os);
    const std::int64_t ostep = os;
    const std::uint64_t length = plan.row.sizes[0], fetch = plan.fetch_bytes, ahead = plan.ahead;
    const std::int64_t ss = plan.row.strides[0][0], ds = plan.row.strides[1][0];
    // The rows a chunk starts with were not prefetched by the chunk before (it had not read
    // their indices yet).
    for (std::uint64_t i = 0; fetch != 0 && i < std::min(ahead, count); ++i) {
      prefetch_bytes(in + offsets[i], fetch);
    }
    switch (plan.move) {
      case RowMove::Element:
        for (std::uint64_t i = 0; i < count; ++i) {
          store_bits(d0 + static_cast<std::int64_t>(i) * ostep, load_bits(in + offsets[i]));
        }
        break;
      case RowMove::Fixed:
        copy_fixed_rows_of_size(plan.row_bytes, reinterpret_cast<const unsigned char*>(in),
                                offsets.data(), count, reinterpret_cast<unsigned char*>(d0),
                                ostep * static_cast<std::int64_t>(sizeof(W)), sizeof(W), ahead);
        break;
      case RowMove::Stream: {
        const std::uint64_t row_bytes = length * sizeof(W);
        const std::int64_t out_step = ostep * static_cast<std::int64_t>(sizeof(W));
        if (stream_rows_aligned(d0, out_step, row_bytes)) {
          stream_aligned_rows(reinterpret_cast<const unsigned char*>(in), offsets.data(), count,
                              reinterpret_cast<unsigned char*>(d0), out_step, sizeof(W),
                              row_bytes, fetch, ahead);
          break;
        }
        if (out_step == static_cast<std::int64_t>(row_bytes) && row_bytes >= kStagedRowMinBytes &&
            row_bytes <= kStageBytes) {
          stream_staged_rows(reinterpret_cast<const unsigned char*>(in), offsets.data(), count,
                             reinterpret_cast<unsigned char*>(d0), sizeof(W), row_bytes, fetch,
                             ahead);
          break;
        }
        [[fallthrough]];
      }
      case RowMove::Run:
        for (std::uint64_t i = 0; i < count; ++i) {
          if (fetch != 0 && i + ahead < count) prefetch_bytes(in + offsets[i + ahead], fetch);
          W* const dst = d0 + static_cast<std::int64_t>(i) * ostep;
          if (plan.move == RowMove::Stream) {
            copy_bytes_streaming(static_cast<void*>(dst), in + offsets[i], length * sizeof(W));
          } else {
            copy_run(in + offsets[i], ss, dst, ds, length);
          }
        }
        break;
      case RowMove::Plan:
        for (std::uint64_t i = 0; i < count; ++i) {
          copy_with_plan(plan.row, in + offsets[i], d0 + static_cast<std::int64_t>(i) * ostep);
        }
        break;
    }
  }, base);
  if (plan.move == RowMove::Stream) stream_fence();
}

// gather_rows_part over parts of the grid on the engine's threads: every row has its own output
// place, so any split writes the same bytes.
template <class W>
void gather_rows(const RowGather& plan, const W* in, W* out, RowOffsetsFn offsets_of,
                 const void* context) {
  const std::uint64_t bytes =
      plan.grid.run_count() * plan.grid.inner_size() * plan.row.run_count() *
      plan.row.inner_size() * sizeof(W);
  for_each_plan_part(plan.grid, bytes, [&](const CopyPlan& grid, const PlanBase& base) {
    RowGather part = plan;
    part.grid = grid;
    gather_rows_part(part, base, in, out, offsets_of, context);
  });
}

// Rows addressed by tuples of indices, the context of index_tuple_offsets: a tuple's `coords`
// indices lie `coord_step` apart in the index tensor, and its index j selects along an input
// dimension of size dim_size[j] and stride dim_stride[j].
struct IndexTuples {
  const void* indices = nullptr;
  std::array<std::uint64_t, kMaxRank> dim_size{};
  std::array<std::int64_t, kMaxRank> dim_stride{};
  std::uint32_t coords = 0;
  std::int64_t coord_step = 0;
  bool clamp = false;  // IndexPolicy::Clamp; otherwise every index was proven in range
  // The positions whose dimension has more than 1 element, the only indices that move a row: one
  // along a dimension of size 1 selects element 0 whatever its value (0 or -1 where proven legal,
  // anything clamped), so it is not read.
  std::array<std::uint32_t, kMaxRank> selecting{};
  std::uint32_t selecting_count = 0;
};
static_assert(std::is_trivially_copyable_v<IndexTuples>);

// The RowOffsetsFn of tuples of I indices: each row's base offset plus, per selecting index, the
// element it selects (the negative-index rule, then clamping under `clamp`) times its dimension's
// stride. Tuples with one selecting index (an input {1, 1, 1, rows, width} too) take the loop
// with no inner loop.
template <IndexElement I>
void index_tuple_offsets(const void* context, std::int64_t first, std::int64_t step,
                         std::int64_t base, std::int64_t base_step, std::uint64_t count,
                         std::int64_t* offsets) {
  const IndexTuples& t = *static_cast<const IndexTuples*>(context);
  const I* const t0 = static_cast<const I*>(t.indices) + first;
  const std::array<std::uint32_t, kMaxRank> read = t.selecting;
  const std::uint32_t reads = t.selecting_count;
  if (reads == 1 && !t.clamp) {  // the common shape: a loop with no inner loop
    const std::uint32_t j = read[0];
    const I* const index = t0 + static_cast<std::int64_t>(j) * t.coord_step;
    const std::uint64_t size = t.dim_size[j];
    const std::int64_t stride = t.dim_stride[j];
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto ii = static_cast<std::int64_t>(i);
      offsets[i] = base + ii * base_step +
                   static_cast<std::int64_t>(wrap_index(index[ii * step], size)) * stride;
    }
    return;
  }
  const std::array<std::uint64_t, kMaxRank> sizes = t.dim_size;
  const std::array<std::int64_t, kMaxRank> strides = t.dim_stride;
  const std::int64_t cstep = t.coord_step;
  const bool clamped = t.clamp;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto ii = static_cast<std::int64_t>(i);
    const I* const tuple = t0 + ii * step;
    std::int64_t offset = base + ii * base_step;
    for (std::uint32_t k = 0; k < reads; ++k) {
      const std::uint32_t j = read[k];
      const I value = tuple[static_cast<std::int64_t>(j) * cstep];
      const std::uint64_t c = clamped ? clamp_index(value, sizes[j]) : wrap_index(value, sizes[j]);
      offset += static_cast<std::int64_t>(c) * strides[j];
    }
    offsets[i] = offset;
  }
}

// ---- elements scattered by index ---------------------------------------------------------------

// Elements moved to offsets read out of an index tensor: `walk` has three operands, 0 the
// position of the element's index, 1 the element's source, 2 its destination before the index's
// contribution (which the operator's reader adds).
struct ElementScatter {
  CopyPlan walk;
  std::int64_t index_base = 0;  // added to operand 0's offsets (a slab's place in the indices)
};
static_assert(std::is_trivially_copyable_v<ElementScatter>);

// The operator's index reader: the destination offsets contributed by `count` indices at
// position first + i * step.
using ElementTargetsFn = void (*)(const void* context, std::int64_t first, std::int64_t step,
                                  std::uint64_t count, std::int64_t* targets);

// Where the fast path's updates go along Axis: the indices, the output's Axis size and stride.
// `place_bytes` (2 or 4; 0 where not): `indices` are places along Axis as SC8's pass left them
// (NarrowedIndices), read where they are stored instead of through the operator's targets
// reader.
struct ScatterTargets {
  const void* indices = nullptr;
  std::uint32_t axis_size = 0;
  std::int64_t axis_stride = 0;
  std::uint32_t place_bytes = 0;
};

// Runs of the walk shorter than this go several to a chunk where they can
// (scatter_short_runs).
inline constexpr std::uint64_t kScatterShortRun = kIndexChunk / 4;

// Whether an ElementScatter's indices and updates continue from each run into the next (the next
// dimension's stride is the run's length times its step): its runs of runs may then be taken as
// one longer run of those two operands.
inline bool scatter_runs_continue(const CopyPlan& walk) noexcept {
  const std::uint32_t r = walk.rank;
  const auto n = static_cast<std::int64_t>(walk.inner_size());
  return r >= 2 && walk.strides[0][r - 2] == n * walk.inner_stride(0) &&
         walk.strides[1][r - 2] == n * walk.inner_stride(1);
}

// An ElementScatter whose runs are short, and whose indices and updates continue from each run
// into the next (scatter_runs_continue): rows of 16
// float32 scattered by indices not narrowed (4-byte indices along an axis too long for 16-bit
// places; narrowed places' loop stores each update straight to its place, with no chunk of
// targets to gain on). A chunk takes as many
// whole runs as fit kIndexChunk: its targets read in one call, then each moved by its run's
// and its position's place in the output, then the stores. A chunk per run paid the reader's
// call and the chunk's setup per 16 elements: float32 {262144, 16} scattered along axis 0 (half
// the axis) ran at half the speed of a plain loop over the indices.
template <class W>
void scatter_short_runs(const ElementScatter& plan, const PlanBase& base, const W* src, W* dst,
                        ElementTargetsFn targets_of, const ScatterTargets& context) {
  const std::uint64_t n = plan.walk.inner_size();
  const std::int64_t si = plan.walk.inner_stride(0);
  const std::int64_t su = plan.walk.inner_stride(1);
  const std::int64_t so = plan.walk.inner_stride(2);
  CopyPlan runs = plan.walk;  // its innermost dimension: the runs, one after another
  --runs.rank;
  const std::int64_t run_to = runs.inner_stride(2);
  const std::uint64_t runs_per_chunk = kIndexChunk / n;
  std::array<std::int64_t, kScatterShortRun> along_run;  // position j's place: j * so
  for (std::uint64_t j = 0; j < n; ++j) along_run[j] = static_cast<std::int64_t>(j) * so;
  const std::uint64_t m = runs.inner_size();
  walk_runs<3>(runs, [&](const std::array<std::int64_t, 3>& o) {
    for (std::uint64_t r0 = 0; r0 < m; r0 += runs_per_chunk) {
      const std::uint64_t count = std::min(runs_per_chunk, m - r0) * n;
      const auto start = static_cast<std::int64_t>(r0 * n);  // in the runs taken as one
      const std::int64_t first = plan.index_base + o[0] + start * si;
      std::array<std::int64_t, kIndexChunk> targets;
      targets_of(&context, first, si, count, targets.data());
      std::int64_t run_at = 0;
      for (std::uint64_t i = 0; i < count; i += n, run_at += run_to) {
        for (std::uint64_t j = 0; j < n; ++j) targets[i + j] += run_at + along_run[j];
      }
      const W* const from = src + (o[1] + start * su);
      W* const to = dst + (o[2] + static_cast<std::int64_t>(r0) * run_to);
      for (std::uint64_t i = 0; i < count; ++i) {
        store_bits(to + targets[i], load_bits(from + static_cast<std::int64_t>(i) * su));
      }
    }
  }, base);
}

// `count` updates from[i * step_from] stored to to[i * step_to + place[i * step_place] *
// axis_stride], in order: places SC8's pass has checked and kept (NarrowedIndices), so each update
// goes straight to its place, with no chunk of offsets computed first.
template <class W, class P>
void store_to_places(const P* place, std::int64_t step_place, std::int64_t axis_stride,
                     const W* from, std::int64_t step_from, W* to, std::int64_t step_to,
                     std::uint64_t count) {
  if (step_place == 1 && step_from == 1 && step_to == 0 && axis_stride == 1) {
    prefetch_stream(from, count * sizeof(W));
    // Four updates a step, loaded before any is stored and stored in order (so of two for one
    // place the later stays): the loop's own instructions were a third of its work. Their four
    // places are read as 8-byte words, taken apart by shifts (little-endian: the first place is
    // the low bits): a load per 16-bit place kept the load ports busier than the stores (int16
    // {8192, 512} along axis 1, one core: 6.1 -> 4.9 ms).
    constexpr unsigned kPerWord = 8 / sizeof(P);
    std::uint64_t i = 0;
    for (; i + 4 <= count; i += 4) {
      P p[4];
      if constexpr (std::endian::native == std::endian::little) {
        std::uint64_t words[4 / kPerWord];
        std::memcpy(words, place + i, sizeof(words));
        for (unsigned k = 0; k < 4; ++k) {
          p[k] = static_cast<P>(words[k / kPerWord] >> (8 * sizeof(P) * (k % kPerWord)));
        }
      } else {
        for (unsigned k = 0; k < 4; ++k) p[k] = place[i + k];
      }
      const W a = load_bits(from + i), b = load_bits(from + i + 1);
      const W c = load_bits(from + i + 2), d = load_bits(from + i + 3);
      store_bits(to + p[0], a);
      store_bits(to + p[1], b);
      store_bits(to + p[2], c);
      store_bits(to + p[3], d);
    }
    for (; i < count; ++i) store_bits(to + place[i], load_bits(from + i));
    return;
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto ii = static_cast<std::int64_t>(i);
    const auto at = static_cast<std::int64_t>(place[ii * step_place]);
    store_bits(to + (ii * step_to + at * axis_stride), load_bits(from + ii * step_from));
  }
}

// An ElementScatter's updates stored to the places SC8's pass kept (NarrowedIndices), a chunk of
// a run at a time. Rows of at most kIndexChunk updates scattered along the last axis whose places
// and updates continue from row to row (a slab's rows) go as one loop over the walk's runs of
// rows, not a chunk per row with the walk's step and the chunk's setup each (float32 rows of 64
// and of 100 along axis 1, one core: 4-6% of the call).
template <class W, class P>
void scatter_to_places(const ElementScatter& plan, const PlanBase& base, const W* src, W* dst,
                       const P* places, std::int64_t axis_stride) {
  const std::int64_t si = plan.walk.inner_stride(0);
  const std::int64_t su = plan.walk.inner_stride(1);
  const std::int64_t so = plan.walk.inner_stride(2);
  const std::uint64_t n = plan.walk.inner_size();
  places += plan.index_base;
  if (n <= kIndexChunk && si == 1 && su == 1 && so == 0 && axis_stride == 1 &&
      scatter_runs_continue(plan.walk)) {
    CopyPlan rows = plan.walk;  // its innermost dimension: the rows, one after another
    --rows.rank;
    const std::uint64_t m = rows.inner_size();
    const std::int64_t row_to = rows.inner_stride(2);
    const auto whole = static_cast<std::int64_t>(n);
    walk_runs<3>(rows, [&](const std::array<std::int64_t, 3>& o) {
      const P* place = places + o[0];
      const W* from = src + o[1];
      W* to = dst + o[2];
      for (std::uint64_t k = 0; k < m; ++k, place += whole, from += whole, to += row_to) {
        store_to_places(place, 1, 1, from, 1, to, 0, n);
      }
    }, base);
    return;
  }
  walk_index_chunks(plan.walk, [&](const std::array<std::int64_t, 3>& o, std::int64_t start,
                                   std::uint64_t count) {
    store_to_places(places + (o[0] + start * si), si, axis_stride, src + (o[1] + start * su), su,
                    dst + (o[2] + start * so), so, count);
  }, base);
}

// Executes an ElementScatter with elements as W, in row-major order of the walk (so of several
// elements sent to one place, the last stays).
template <class W>
void scatter_elements_part(const ElementScatter& plan, const PlanBase& base, const W* src, W* dst,
                           ElementTargetsFn targets_of, const ScatterTargets& context) {
  const std::int64_t si = plan.walk.inner_stride(0);
  const std::int64_t su = plan.walk.inner_stride(1);
  const std::int64_t so = plan.walk.inner_stride(2);
  const std::uint64_t n = plan.walk.inner_size();
  if (context.place_bytes == 2) {
    return scatter_to_places(plan, base, src, dst,
                             static_cast<const std::uint16_t*>(context.indices),
                             context.axis_stride);
  }
  if (context.place_bytes == 4) {
    return scatter_to_places(plan, base, src, dst,
                             static_cast<const std::uint32_t*>(context.indices),
                             context.axis_stride);
  }
  if (n <= kScatterShortRun && scatter_runs_continue(plan.walk)) {
    return scatter_short_runs(plan, base, src, dst, targets_of, context);
  }
  walk_index_chunks(plan.walk, [&](const std::array<std::int64_t, 3>& o, std::int64_t start,
                                   std::uint64_t count) {
    // Locals: store_bits's memcpy may alias anything, so values read through the closure would
    // be reloaded after every store (8x slower, bench_scatter).
    const W* const from = src + (o[1] + start * su);
    W* const to = dst + (o[2] + start * so);
    const std::int64_t step_from = su, step_to = so;
    std::array<std::int64_t, kIndexChunk> targets;
    targets_of(&context, plan.index_base + o[0] + start * si, si, count, targets.data());
    if (step_from == 1 && step_to == 0) {
      // Contiguous updates along the output's axis (indices along the innermost dimension): the
      // index alone places each element, so the loop is a load and a store. The updates are a
      // stream read once: the chunk asks for those ahead of it first (prefetch_stream).
      prefetch_stream(from, count * sizeof(W));
      for (std::uint64_t i = 0; i < count; ++i) store_bits(to + targets[i], load_bits(from + i));
      return;
    }
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto ii = static_cast<std::int64_t>(i);
      store_bits(to + (ii * step_to + targets[i]), load_bits(from + ii * step_from));
    }
  }, base);
}

// A run of the output shorter than this is not split between threads (scatter_elements): two
// parts of a run of 1 KiB share one cache line of eight. Int16 {16384, 512} scattered along
// axis 0 on two threads: 33 ms kept whole, 21 ms split (one thread: 33 ms).
inline constexpr std::uint64_t kScatterSplitRunBytes = 1024;

// scatter_elements_part over parts of the walk on the engine's threads. Only dimensions along
// which the destination moves (operand 2's stride is not 0) are split: an index changes its
// element's place along the scattered axis only, where that stride is 0, so two updates of one
// output element always fall in one part, and within a part they are stored in the walk's order
// (the last stays, as in the one-thread loop).
template <class W>
void scatter_elements(const ElementScatter& plan, const W* src, W* dst,
                      ElementTargetsFn targets_of, const ScatterTargets& context) {
  const std::uint64_t bytes = plan.walk.run_count() * plan.walk.inner_size() * sizeof(W);
  if (bytes < parallel_min_bytes) {  // every slab of a SCATTER built slab by slab
    return scatter_elements_part(plan, PlanBase{}, src, dst, targets_of, context);
  }
  std::uint32_t allowed = 0;
  for (std::uint32_t d = 0; d < plan.walk.rank; ++d) {
    if (plan.walk.strides[2][d] != 0) allowed |= 1u << d;
  }
  // The runs themselves only where they are long: parts side by side in a short run write each
  // of its cache lines from two threads (float32 {1048576, 16} scattered along axis 0 on two
  // threads: 70 ms split, 46 ms kept whole, 57 ms on one thread).
  const std::uint64_t run_bytes = plan.walk.inner_size() *
                                  static_cast<std::uint64_t>(std::abs(plan.walk.inner_stride(2))) *
                                  sizeof(W);
  if (run_bytes < kScatterSplitRunBytes) allowed &= ~(1u << (plan.walk.rank - 1));
  for_each_plan_part(plan.walk, bytes, [&](const CopyPlan& walk, const PlanBase& base) {
    ElementScatter part = plan;
    part.walk = walk;
    scatter_elements_part(part, base, src, dst, targets_of, context);
  }, allowed);
}

// ---- index passes ------------------------------------------------------------------------------

// True when `run_passes(first, step, length)` holds for every run of `plan`, given each operand's
// first offset and step in the run: the frame of the SC8 and G10 passes, a run at a time. On the
// engine's threads when the plan moves at least `bytes` bytes (parts of the plan,
// for_each_plan_part): a pass reads every index and says whether one is out of bounds, writing
// nothing but what it keeps of them (SCATTER's places).
template <std::size_t N, class RunPasses>
bool every_run_passes(const CopyPlan& plan, std::uint64_t bytes, RunPasses run_passes) {
  if (plan.operand_count != N) {
    fail(ErrorCode::InvalidOption, "every_run_passes: the plan has ", plan.operand_count,
         " operands but ", N, " offsets were asked for");
  }
  std::atomic<bool> any_bad{false};
  for_each_plan_part(plan, bytes, [&](const CopyPlan& part, const PlanBase& at) {
    // The part's own runs: a split of the innermost dimension shortens them.
    const std::uint64_t run = part.inner_size();
    std::array<std::int64_t, N> step{};
    for (std::size_t k = 0; k < N; ++k) step[k] = part.inner_stride(k);
    bool bad = false;
    walk_runs<N>(part, [&](const std::array<std::int64_t, N>& o) {
      std::array<std::int64_t, N> first{};
      for (std::size_t k = 0; k < N; ++k) first[k] = at[k] + o[k];
      bad = bad || !run_passes(first, step, run);
    });
    if (bad) any_bad.store(true, std::memory_order_relaxed);
  });
  return !any_bad.load(std::memory_order_relaxed);
}

// True when `run_legal(first, step, length)` holds for every run of operand 0 of `plan` from
// `base`, each position of the plan holding `per_position` indices.
template <std::size_t N, IndexElement I, class RunLegal>
bool all_runs_legal(const CopyPlan& plan, const I* base, std::uint64_t per_position,
                    RunLegal run_legal) {
  const std::uint64_t bytes = plan.run_count() * plan.inner_size() * per_position * sizeof(I);
  using Offsets = std::array<std::int64_t, N>;
  return every_run_passes<N>(plan, bytes, [base, &run_legal](const Offsets& first,
                                                           const Offsets& step, std::uint64_t run) {
    return run_legal(base + first[0], step[0], run);
  });
}

// True when every index operand 0 of `plan` reaches from `base` lies within `bounds`
// (all_indices_legal, a run at a time).
template <std::size_t N, IndexElement I>
bool all_run_indices_legal(const CopyPlan& plan, const I* base, IndexBounds<I> bounds) {
  return all_runs_legal<N>(plan, base, 1, [bounds](const I* run, std::int64_t step,
                                                   std::uint64_t n) {
    return all_indices_legal(run, step, n, bounds);
  });
}

// ---- scratch memory kept between calls -------------------------------------------------------

// The most scratch memory kept between calls (Scratch): SCATTER's largest places.
inline constexpr std::size_t kMaxKeptScratchBytes = std::size_t{256} << 20;

// Memory one call needs for itself (SCATTER's narrowed places, REVERSE_SUBSEQUENCES' tiles),
// kept between calls up to kMaxKeptScratchBytes. Fresh memory costs a page fault per 4 KiB on
// first touch (about 2 us each on the 2-core host of bench/README.md, so 4 ms for 8 MiB: more
// than SCATTER's narrowed pass saves), and allocators differ in whether they hand it back to the
// system at once. One block is kept: a call (or a thread of one) takes it, or allocates its own
// where another holds it or it is too small, and gives back the larger. Blocks of 4 MiB and more
// come in whole 2 MiB pages where Linux offers them (transparent huge pages, asked for by
// madvise): one fault per 2 MiB (128 MiB touched in 6 ms on that host, against 59 ms in 4 KiB
// pages). Even so, fresh memory for each call made SCATTER of 256 MiB on two threads as slow as
// on one in half the runs there (the faults' zeroing, 14% of the time): the block SCATTER's
// largest places need (up to kMaxKeptScratchBytes) stays, until exit or
// release_scratch_memory().
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { give_back(); }

  // At least `bytes` bytes (aligned for any element), or false where they cannot be allocated.
  bool reserve(std::size_t bytes) noexcept {
    if (block_ != nullptr && block_->bytes >= bytes) return true;
    give_back();
    block_ = kept().exchange(nullptr, std::memory_order_acquire);
    if (block_ != nullptr && block_->bytes >= bytes) return true;
    give_back();
    block_ = new (std::nothrow) Block(bytes);
    if (block_ != nullptr && block_->data == nullptr) {
      delete block_;
      block_ = nullptr;
    }
    return block_ != nullptr;
  }
  void* data() const noexcept { return block_ != nullptr ? block_->data : nullptr; }

  // Frees the kept block; blocks that calls hold now are theirs until they give them back.
  static void release_kept() noexcept {
    delete kept().exchange(nullptr, std::memory_order_acq_rel);
  }

 private:
  struct Block {
    explicit Block(std::size_t size) noexcept : bytes(size) {
#if defined(__linux__)
      if (in_huge_pages()) {
        constexpr std::size_t kHugePage = std::size_t{2} << 20;
        const std::size_t whole = (size + kHugePage - 1) / kHugePage * kHugePage;
        data = std::aligned_alloc(kHugePage, whole);
        if (data != nullptr) ::madvise(data, whole, MADV_HUGEPAGE);  // a hint: failure is fine
        return;
      }
#endif
      data = new (std::nothrow) std::uint64_t[(size + 7) / 8];
    }
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    ~Block() {
      if (in_huge_pages()) {
        std::free(data);  // from aligned_alloc
      } else {
        delete[] static_cast<std::uint64_t*>(data);
      }
    }
    bool in_huge_pages() const noexcept {
#if defined(__linux__)
      return bytes >= kHugePagesFrom;
#else
      return false;
#endif
    }
    std::size_t bytes;
    void* data = nullptr;
  };
  // The kept block, freed at exit.
  struct Kept {
    std::atomic<Block*> block{nullptr};
    ~Kept() { delete block.exchange(nullptr); }
  };
  static std::atomic<Block*>& kept() noexcept {
    static Kept k;
    return k.block;
  }
  void give_back() noexcept {
    Block* b = std::exchange(block_, nullptr);
    if (b == nullptr) return;
    // b's size is read before it is given: once kept, another thread may take it and free it.
    const std::size_t bytes = b->bytes;
    if (bytes <= kMaxKeptScratchBytes) {
      Block* other = kept().exchange(b, std::memory_order_acq_rel);
      if (other != nullptr && other->bytes > bytes) other = kept().exchange(other);
      delete other;
    } else {
      delete b;
    }
  }
  static constexpr std::size_t kHugePagesFrom = std::size_t{4} << 20;
  Block* block_ = nullptr;
};

}  // namespace dmlref::detail

namespace dmlref {

// Frees the scratch memory the operators keep between calls (at most 256 MiB: the places of the
// largest SCATTER so far, or REVERSE_SUBSEQUENCES' tiles). The next call that needs it allocates
// it again. Safe while operators run on other threads: what they hold stays theirs.
inline void release_scratch_memory() noexcept { detail::Scratch::release_kept(); }

}  // namespace dmlref

namespace dmlref::detail {

// ---- indices checked and narrowed (SCATTER) ---------------------------------------------------

// SCATTER's indices as its SC8 pass leaves them when it keeps what it computes: each index's place
// along Axis (a negative index counted from the end) in 16 or 32 bits, over the indices' sizes
// (packed over their stored elements, stride 0 where the indices broadcast). The scatter then
// reads 2 or 4 bytes per index and stores each update straight to its place, instead of reading
// the indices again and turning each chunk into offsets (with int64 indices, a third of its time).
struct NarrowedIndices {
  Scratch memory;
  const void* places = nullptr;  // null: the scatter reads the indices themselves
  std::uint32_t place_bytes = 0;  // 2 (std::uint16_t places) or 4 (std::uint32_t)
  Layout layout;
};

// Places fit 16 bits up to this axis size. Along longer axes (up to 2^32 - 1 elements, T4) the
// places of 8-byte indices take 32 bits, half the indices' bytes; 4-byte indices are read where
// they are. A variable so that tests can take 32-bit places along any axis; set it only while no
// operator runs.
inline constexpr std::uint32_t kNarrow16MaxAxis = 65536;
inline std::uint32_t narrow16_max_axis = kNarrow16MaxAxis;
// Fewer stored indices are checked by the plain pass: the narrowed pass takes scratch memory. A
// variable so that tests can narrow every call; set it only while no operator runs.
inline constexpr std::uint64_t kNarrowMinIndices = 4096;
inline std::uint64_t narrow_min_indices = kNarrowMinIndices;
// More are checked by the plain pass too: the places (2 or 4 bytes per index, at most half the
// indices' own bytes) never outgrow the most Scratch keeps.
inline constexpr std::uint64_t kNarrowMaxPlaceBytes = kMaxKeptScratchBytes;

// Runs of fewer indices write their places with ordinary stores, however many there are.
inline constexpr std::uint64_t kNarrowStreamMinRun = 4096;

// Checks `count` indices run[i * step] against `bounds` (the legal range for an axis of n) and
// writes each one's place to places[i * place_step]: for u = v - lo (wrapping), u - n where
// u >= n (a negative index) and u otherwise. False when one is illegal. `stream`: as
// narrow_index_blocks_avx2.
template <IndexElement I, class P>
bool narrow_index_run(const I* run, std::int64_t step, P* places,
                      std::int64_t place_step, std::uint64_t count, IndexBounds<I> bounds,
                      std::uint32_t n, bool stream) noexcept {
  using U = std::make_unsigned_t<I>;
  const auto lo = static_cast<U>(bounds.lo);
  const U span = static_cast<U>(bounds.hi) - lo;
  U bad = 0;
  std::uint64_t i = 0;
#if DMLREF_ENGINE_AVX2
  if (step == 1 && place_step == 1 && engine_avx2_enabled()) {
    if (!narrow_index_blocks_avx2<I, P>(run, count, lo, span, U{n}, places, stream)) bad = 1;
    i = count - count % kNarrowBlock;
  }
#else
  (void)stream;  // only the AVX2 blocks stream
#endif
  for (; i < count; ++i) {
    const auto ii = static_cast<std::int64_t>(i);
    const U u = static_cast<U>(run[ii * step]) - lo;
    bad |= static_cast<U>(u > span);
    places[ii * place_step] = static_cast<P>(u >= n ? u - n : u);
  }
  return bad == 0;
}

// SCATTER's SC8 pass over `stored` (the indices' layout with broadcast dimensions at size 1): true
// when every index lies within `bounds`. Where `into` is given and narrowing pays (AVX2, places
// narrower than the indices: 16 bits up to narrow16_max_axis, 32 bits past it for 8-byte indices;
// enough indices, and the buffer allocated), the same pass fills `into` for `indices` (the full
// layout); otherwise it only checks (all_run_indices_legal).
template <IndexElement I>
bool check_and_narrow_indices(const Layout& indices, const Layout& stored, const I* data,
                              IndexBounds<I> bounds, std::uint32_t n, NarrowedIndices* into) {
  const std::uint64_t count = stored.element_count();
  const std::uint32_t place_bytes = n <= narrow16_max_axis ? 2 : sizeof(I) == 8 ? 4 : 0;
  const bool narrow = into != nullptr && engine_avx2_enabled() && place_bytes != 0 &&
                      count >= narrow_min_indices && count <= kNarrowMaxPlaceBytes / place_bytes;
  if (!narrow || !into->memory.reserve(count * place_bytes)) {
    const std::array<std::array<std::int64_t, kMaxRank>, 1> strides{stored.strides};
    return all_run_indices_legal<1>(make_copy_plan(stored.size_span(), strides), data, bounds);
  }
  into->layout = Layout::packed(stored.size_span());
  for (std::uint32_t d = 0; d < indices.rank; ++d) {
    into->layout.sizes[d] = indices.sizes[d];
    if (indices.strides[d] == 0) into->layout.strides[d] = 0;
  }
  const std::array<std::array<std::int64_t, kMaxRank>, 2> strides{stored.strides,
                                                                  into->layout.strides};
  const CopyPlan plan = make_copy_plan(stored.size_span(), strides);
  // Places that outgrow the caches stream (narrow_index_blocks_avx2), in runs long enough that
  // the fence each ends with costs nothing.
  const bool stream = count * place_bytes >= kStreamMinBytes;
  const auto narrow_into = [&](auto* places) {
    return every_run_passes<2>(plan, count * sizeof(I), [&](
        const std::array<std::int64_t, 2>& first, const std::array<std::int64_t, 2>& step,
        std::uint64_t run) {
      return narrow_index_run(data + first[0], step[0], places + first[1], step[1], run, bounds,
                              n, stream && run >= kNarrowStreamMinRun);
    });
  };
  bool legal = false;
  if constexpr (sizeof(I) == 8) {  // 32-bit places only where they halve the indices
    legal = place_bytes == 2 ? narrow_into(static_cast<std::uint16_t*>(into->memory.data()))
                             : narrow_into(static_cast<std::uint32_t*>(into->memory.data()));
  } else {
    legal = narrow_into(static_cast<std::uint16_t*>(into->memory.data()));
  }
  if (!legal) return false;
  into->places = into->memory.data();
  into->place_bytes = place_bytes;
  return true;
}

// ---- outputs scattered along an axis, slab by slab (SCATTER) -----------------------------------

// The operator's plan of the updates of one slab (or the whole tensors) along `axis`.
using ElementScatterPlanFn = ElementScatter (*)(const Layout& indices, const Layout& updates,
                                                const Layout& output, std::uint32_t axis);

// Two indices that target one output element: their row-major positions in the indices.
struct ScatterRepeat {
  std::uint64_t first = 0;   // the earlier index
  std::uint64_t repeat = 0;  // the first index (row-major) whose target was already taken
};

// DuplicatePolicy::Reject's pass: the first index (row-major) whose output element an earlier
// index already targets, and that earlier index, or nullopt. One bit per output element, and the
// targets as the fast path reads them (`targets_of`, scatter_targets of the index type), a chunk
// at a time: compiled once, not per index type. Both walks stop where they find what they look
// for, so a rejection costs at most one pass over as many indices as the output has elements (the
// first repeat comes no later), however many indices broadcast strides describe. A validation
// pass (it allocates its bit set), not a plan's executing path.
template <class Deferred = void>
inline std::optional<ScatterRepeat> first_repeated_scatter_target(const Layout& indices,
                                                                 const void* indices_data,
                                                                 const Layout& input,
                                                                 std::uint32_t axis,
                                                                 ElementTargetsFn targets_of) {
  const Layout output = Layout::packed(input.size_span());
  const Layout positions = Layout::packed(indices.size_span());
  // Operands: 0 the index, 1 its output element before the index's contribution, 2 its
  // row-major position in the indices.
  std::array<std::array<std::int64_t, kMaxRank>, 3> strides{indices.strides, output.strides,
                                                            positions.strides};
  strides[1][axis] = 0;
  const CopyPlan walk = make_copy_plan(indices.size_span(), strides);
  const ScatterTargets targets{indices_data, input.sizes[axis], output.strides[axis]};
  const std::int64_t si = walk.inner_stride(0), so = walk.inner_stride(1);
  const std::int64_t sp = walk.inner_stride(2);
  // Calls found(element) for each index's output element in row-major order until it returns
  // true; the position of that index.
  auto search = [&](auto&& found) {
    std::optional<std::uint64_t> position;
    walk_index_chunks(walk, [&](const std::array<std::int64_t, 3>& o, std::int64_t start,
                                std::uint64_t count) {
      std::array<std::int64_t, kIndexChunk> target;
      targets_of(&targets, o[0] + start * si, si, count, target.data());
      for (std::uint64_t i = 0; i < count; ++i) {
        const auto at = start + static_cast<std::int64_t>(i);
        if (found(static_cast<std::uint64_t>(o[1] + at * so + target[i]))) {
          position = static_cast<std::uint64_t>(o[2] + at * sp);
          return true;
        }
      }
      return false;
    });
    return position;
  };
  std::vector<bool> taken(input.element_count(), false);
  std::uint64_t repeated = 0;
  const std::optional<std::uint64_t> repeat = search([&](std::uint64_t element) {
    if (taken[element]) {
      repeated = element;
      return true;
    }
    taken[element] = true;
    return false;
  });
  if (!repeat) return std::nullopt;
  // The earlier index with the same element: a second walk, which stops before `repeat`.
  const std::optional<std::uint64_t> first =
      search([&](std::uint64_t element) { return element == repeated; });
  return ScatterRepeat{*first, *repeat};
}

// The output bytes at one coordinate of the dimensions before Axis up to which the fast path
// builds the output slab by slab (scatter_by_width): up to the size from which a copy streams.
// A block larger than the L2 cache still gains: copied with ordinary stores, it is in the L3 when
// its updates go in, where the whole output streamed to memory was read back for them (float32
// rows of 131072 along axis 1, int64 indices, one core: 16 MiB 10.0-13.8 -> 9.2 ms, 256 MiB
// 172 -> 146-148 ms; with 256 KiB here, only blocks up to that size were built so).
inline constexpr std::uint64_t kScatterMaxSlabBlockBytes = kStreamMinBytes;

// The four tensors of a SCATTER (input, output, indices, updates) or one slab of them: layouts
// and element offsets from the tensors' own data pointers.
struct ScatterSlab {
  std::array<Layout, 4> layouts;
  std::array<std::int64_t, 4> offsets{};
  std::uint32_t axis = 0;
  bool whole = false;  // the whole tensors (the copy then streams when it is large), not a slab
};

// Calls move(context, slab) for each slab of the output, in row-major order: a range of
// coordinates of the dimensions before Axis (along the innermost run of their walk) covering at
// most kSlabBytes of output, with each tensor's dimensions from Axis on. Every slab's updates
// target only its own output block (SC7), so the slabs may be built one after the other. Where
// the block at one such coordinate is larger than kScatterMaxSlabBlockBytes, or Axis is 0, `whole`
// is moved as it is. Compiled once, not per element width.
template <class Deferred = void>
inline void for_each_scatter_slab(const ScatterSlab& whole, std::size_t element_bytes,
                                  void (*move)(const void* context, const ScatterSlab& slab),
                                  const void* context) {
  const std::uint32_t axis = whole.axis;
  std::uint64_t block = element_bytes;
  for (std::uint32_t d = axis; d < whole.layouts[1].rank; ++d) block *= whole.layouts[1].sizes[d];
  if (block == 0) return;  // no output element
  if (axis == 0 || block > kScatterMaxSlabBlockBytes) return move(context, whole);
  const std::uint64_t rows = std::max<std::uint64_t>(1, kSlabBytes / block);
  const Layout& out = whole.layouts[1];
  std::array<std::array<std::int64_t, kMaxRank>, 4> outer_strides{};
  for (std::size_t k = 0; k < 4; ++k) outer_strides[k] = whole.layouts[k].strides;
  const CopyPlan outer = make_copy_plan(out.size_span().first(axis), outer_strides);
  ScatterSlab parted;
  parted.axis = 1;
  for (std::size_t k = 0; k < 4; ++k) {
    const Layout& l = whole.layouts[k];
    Layout& part = parted.layouts[k];
    part.rank = 1 + l.rank - axis;
    part.strides[0] = outer.inner_stride(k);
    for (std::uint32_t d = axis; d < l.rank; ++d) {
      part.sizes[1 + d - axis] = l.sizes[d];
      part.strides[1 + d - axis] = l.strides[d];
    }
  }
  // Threads take parts of the outer walk: each slab is built whole by one thread, and no two
  // slabs share an output element (SC7).
  std::uint64_t bytes = block;
  for (std::uint32_t d = 0; d < axis; ++d) bytes *= out.sizes[d];
  for_each_plan_part(outer, bytes, [&](const CopyPlan& part, const PlanBase& base) {
    ScatterSlab slab = parted;
    const std::uint64_t part_run = part.inner_size();
    walk_runs<4>(part, [&](const std::array<std::int64_t, 4>& o) {
      for (std::uint64_t begin = 0; begin < part_run; begin += rows) {
        const auto b = static_cast<std::int64_t>(begin);
        for (std::size_t k = 0; k < 4; ++k) {
          slab.layouts[k].sizes[0] = static_cast<std::uint32_t>(std::min(rows, part_run - begin));
          slab.offsets[k] = o[k] + b * slab.layouts[k].strides[0];
        }
        move(context, slab);
      }
    }, base);
  });
}

// What scatter_by_width's slabs move: the tensors' data and the targets reader.
template <class W>
struct ScatterData {
  const W* input;
  W* output;
  const W* updates;
  ElementTargetsFn targets_of;
  const ScatterTargets* targets;
  ElementScatterPlanFn plan_of;
};

// One slab (or the whole tensors): the output block copied from the input, then its updates
// stored, a slab while it is still in the L1 cache.
template <class W>
void scatter_slab(const void* context, const ScatterSlab& slab) {
  const ScatterData<W>& data = *static_cast<const ScatterData<W>*>(context);
  W* const out = data.output + slab.offsets[1];
  copy_view(TensorView<const W>(data.input + slab.offsets[0], slab.layouts[0]),
            TensorView<W>(out, slab.layouts[1]),
            slab.whole ? std::nullopt : std::optional<bool>(false));
  ElementScatter plan =
      data.plan_of(slab.layouts[2], slab.layouts[3], slab.layouts[1], slab.axis);
  plan.index_base = slab.offsets[2];
  scatter_elements(plan, data.updates + slab.offsets[3], out, data.targets_of, *data.targets);
}

// The fast path by element width: output = input with the strided-copy core, then the updates
// in row-major order of the indices, as the golden loop (so the last of several updates for one
// element stays), with targets read by `targets_of` (scatter_targets of the index type) and each
// slab's updates planned by `plan_of` (plan_scatter).
// By SC7 every tensor has the output's sizes before Axis, and the updates at one coordinate there
// target only the output's block at that coordinate. So where that block is small, the output is
// built a slab of blocks at a time (scatter_slab), instead of copying the whole output and coming
// back to it for the updates.
// `narrowed`: the indices' places, where SC8's pass kept them (check_and_narrow_indices).
template <class W>
void scatter_by_width(const TensorView<const W>& input, const Layout& indices,
                      const void* indices_data, const TensorView<const W>& updates,
                      const TensorView<W>& output, std::uint32_t axis,
                      ElementTargetsFn targets_of, ElementScatterPlanFn plan_of,
                      const NarrowedIndices* narrowed = nullptr) {
  const bool by_place = narrowed != nullptr && narrowed->places != nullptr;
  const ScatterTargets targets{by_place ? narrowed->places : indices_data,
                               output.size(axis), output.stride(axis),
                               by_place ? narrowed->place_bytes : 0};
  const ScatterData<W> data{input.data(), output.data(), updates.data(), targets_of, &targets,
                            plan_of};
  const ScatterSlab whole{
      {input.layout(), output.layout(), by_place ? narrowed->layout : indices, updates.layout()},
      {},
      axis,
      true};
  for_each_scatter_slab(whole, sizeof(W), &scatter_slab<W>, &data);
}

// ---- runs reversed up to a length --------------------------------------------------------------

// Runs along one axis, each reversed up to its own length and copied unchanged after it. `walk`
// visits the runs (the axis dropped) with three operands: 0 the input, 1 the run's length, 2 the
// output; the axis has `axis_size` elements and the given strides.
struct ReversedRuns {
  CopyPlan walk;
  std::uint64_t axis_size = 0;
  std::int64_t in_step = 0;
  std::int64_t out_step = 0;
};
static_assert(std::is_trivially_copyable_v<ReversedRuns>);

// Position `a` of a run reads from here: the rule is mapping::reversed_position, the one the
// reference loop and GPU kernels use (axis sizes are at most 2^32 - 1, T4).
inline std::uint64_t reversed_source(std::uint64_t a, std::uint64_t length,
                                     std::uint64_t axis_size) noexcept {
  return mapping::reversed_position(static_cast<std::uint32_t>(a), length,
                                    static_cast<std::uint32_t>(axis_size));
}

// The operator's length reader: `count` lengths at position first + i * step, each at most
// `axis_size` (the operator clamps by its rules).
using RunLengthsFn = void (*)(const void* lengths, std::int64_t first, std::int64_t step,
                              std::uint64_t count, std::uint64_t axis_size, std::uint64_t* out);

// Runs along the axis of at most this many elements, one after another, go element by element
// with no branch on their lengths: the vector copies split each run where its length falls, a
// branch that lengths differing from run to run mispredict. 16 MiB of rows of 7 float32
// reversed along the inner axis, a random length per row, one core: 0.10 of memcpy in vectors,
// 0.19 so; 3 float32 0.065 and 0.17. From about 12 elements of 4 or 8 bytes the vectors win.
inline constexpr std::uint64_t kReverseShortRun = 8;

#if DMLREF_ENGINE_AVX2
// The shuffles of reverse_short_rows_avx2 for rows of `n` elements (at most kReverseShortRun) of
// `element_bytes`, 2 to 64 bytes: for each length l up to n, output byte b of the row comes from
// byte b % element_bytes of element reversed_source(b / element_bytes, l, n), the reference's
// rule, found in the two halves the row is loaded as.
struct ShortRowShuffles {
  // 2, 4 or 8: the largest power of two up to the row; 16 over 16 bytes, 32 over 32.
  std::size_t half = 0;
  alignas(32) unsigned char lanes[kReverseShortRun + 1][64]{};  // bytes, or 4-byte lane numbers
};

inline ShortRowShuffles short_row_shuffles(std::uint64_t n, std::size_t element_bytes) noexcept {
  ShortRowShuffles t;
  const std::size_t row = n * element_bytes;
  std::size_t h = 2;
  while (h * 2 <= row && h < 8) h *= 2;
  if (row > 16) h = row > 32 ? 32 : 16;
  t.half = h;
  // The byte of the output's layout at lane position `lane`, and the lane a row byte is loaded
  // into (the first half where it lies in both).
  const auto row_byte = [&](std::size_t lane) { return lane < h ? lane : row - h + (lane - h); };
  const auto lane_of = [&](std::size_t byte) { return byte < h ? byte : h + (byte - (row - h)); };
  for (std::uint64_t l = 0; l <= n; ++l) {
    const auto from = [&](std::size_t b) {
      return reversed_source(b / element_bytes, l, n) * element_bytes + b % element_bytes;
    };
    for (std::size_t k = 0; k < 2 * std::max<std::size_t>(h, 8); ++k) {
      if (h >= 16) {
        if (k % 4 != 0) continue;  // lane k / 4 as a little-endian 32-bit lane number
        t.lanes[l][k] = static_cast<unsigned char>(lane_of(from(row_byte(k))) / 4);
      } else {
        // Lanes past the two halves are never stored: 0x80 makes them zero.
        t.lanes[l][k] = k < 2 * h ? static_cast<unsigned char>(lane_of(from(row_byte(k)))) : 0x80;
      }
    }
  }
  return t;
}

// ReversedRuns whose runs are contiguous in both tensors, a chunk of runs per call of an AVX2
// loop: reverse_rows_avx2, or for short runs (kReverseShortRun elements or fewer, 2 bytes or
// more) reverse_short_rows_avx2, one shuffle per row for any length, where the element loop of
// reverse_runs_part spent a load, a store and the length arithmetic per element. One core,
// 16 MiB along axis 1, through the module, full or random lengths alike: float32 {N, 4} 3.55 ->
// 1.09 ms (numpy's x[:, ::-1] 2.55, torch.flip 2.8), float64 {N, 8} 1.49 -> 0.66 (numpy 0.83),
// uint8 {N, 8} 11.3 -> 2.06 (torch 4.8), int16 {N, 3} 8.1 -> 4.1 (5.6). Bytes, not elements:
// compiled once for every width.
template <class Deferred = void>
inline void reverse_contiguous_runs_avx2(const ReversedRuns& plan, const PlanBase& base,
                                         const void* in,
                                         const void* lengths, void* out, RunLengthsFn lengths_of,
                                         std::size_t element_bytes) {
  const std::uint64_t n = plan.axis_size;
  const auto w = static_cast<std::int64_t>(element_bytes);
  const std::int64_t in_inner = plan.walk.inner_stride(0) * w;
  const std::int64_t len_inner = plan.walk.inner_stride(1);
  const std::int64_t out_inner = plan.walk.inner_stride(2) * w;
  const auto* const src = static_cast<const unsigned char*>(in);
  auto* const dst = static_cast<unsigned char*>(out);
  const std::size_t row = n * element_bytes;
  const bool short_runs = n <= kReverseShortRun;
  const ShortRowShuffles table = short_runs ? short_row_shuffles(n, element_bytes)
                                            : ShortRowShuffles{};
  walk_index_chunks(plan.walk, [&](const std::array<std::int64_t, 3>& o, std::int64_t start,
                                   std::uint64_t count) {
    std::array<std::uint64_t, kIndexChunk> length;
    lengths_of(lengths, o[1] + start * len_inner, len_inner, count, n, length.data());
    const unsigned char* const s = src + o[0] * w + start * in_inner;
    unsigned char* const d = dst + o[2] * w + start * out_inner;
    const std::uint64_t* const l = length.data();
    if (short_runs) {
      switch (table.half) {
        case 2: return reverse_short_rows_avx2<2>(s, in_inner, d, out_inner, l, count, row,
                                                  table.lanes);
        case 4: return reverse_short_rows_avx2<4>(s, in_inner, d, out_inner, l, count, row,
                                                  table.lanes);
        case 8: return reverse_short_rows_avx2<8>(s, in_inner, d, out_inner, l, count, row,
                                                  table.lanes);
        case 16: return reverse_short_rows_avx2<16>(s, in_inner, d, out_inner, l, count, row,
                                                    table.lanes);
        default: return reverse_short_rows_avx2<32>(s, in_inner, d, out_inner, l, count, row,
                                                    table.lanes);
      }
    }
    switch (element_bytes) {
      case 1: return reverse_rows_avx2<1>(s, in_inner, d, out_inner, l, count, row);
      case 2: return reverse_rows_avx2<2>(s, in_inner, d, out_inner, l, count, row);
      case 4: return reverse_rows_avx2<4>(s, in_inner, d, out_inner, l, count, row);
      default: return reverse_rows_avx2<8>(s, in_inner, d, out_inner, l, count, row);
    }
  }, base);
}
#endif

// Rows narrower than this that a REVERSE writes in descending order (reverse_runs_part) take
// ordinary stores: streaming stores going down a line or two at a time ran several times slower,
// even in whole lines (AMD, one core, float64 {N, 2} along axis 0, full lengths, rows of 16
// bytes: 4.2-4.4 ms streamed, 0.74-0.79 ordinary at 16 MiB, 67-68 against 16-16.5 at 256 MiB;
// rows of 64 bytes on a line 1.11 against 0.67, 19.3 against 15.1). From 128 bytes the
// streaming stores win at 256 MiB (13.2-13.9 ms against 18.7-21.2).
inline constexpr std::uint64_t kStreamReversedRowMinBytes = 128;

// Rows ahead of the one being read that a group of runs of different lengths asks the cache for
// where their extent along the axis cannot stay in the L1 cache (reverse_runs_part).
inline constexpr std::uint64_t kReverseAheadRows = 4;

// Runs side by side whose lengths differ go a tile of runs this many bytes wide at a time
// (reverse_runs_by_tiles; 128 bytes was no faster), where the axis has at least
// kReverseTileMinRows positions (bench_table's matrix shape of 19 went faster in groups) and the
// tile's two buffers take at most kReverseTileMaxBuffer bytes.
inline constexpr std::uint64_t kReverseTileBytes = 64;
inline constexpr std::uint64_t kReverseTileMinRows = 32;
inline constexpr std::uint64_t kReverseTileMaxBuffer = std::uint64_t{16} << 20;

// Whether runs side by side of different lengths go tile by tile: rows along the axis one
// element apart in both tensors, and enough of them (kReverseTileMinRows) for the transposes to
// gain over groups of runs that read each source row while it is cached.
inline bool reverse_by_tiles(const ReversedRuns& plan) noexcept {
  const std::uint64_t n = plan.axis_size;
  return plan.walk.inner_size() > 1 && plan.walk.inner_stride(0) == 1 &&
         plan.walk.inner_stride(2) == 1 && n >= kReverseTileMinRows &&
         n <= kReverseTileMaxBuffer / (2 * kReverseTileBytes);
}

// Runs side by side of different lengths whose row spans at most this many bytes of the input go
// by reverse_narrow_rows, not in groups that find each element's source row on its own and ask
// for it ahead (reverse_runs_part).
inline constexpr std::uint64_t kReverseNarrowRowBytes = 128;

// Whether rows of runs side by side of different lengths go tile by tile (reverse_runs_by_tiles).
// Narrow rows go by reverse_narrow_rows instead, unless their elements are 1 or 2 bytes and a tile
// is 32 bytes wide or more: the element loop then costs more than the tiles' transposes. One
// core, a random length per column, 131072 rows: rows of 32 uint8 3.8 ms by elements against 1.0
// by tiles, 16 int16 1.6-2.5 against 0.8-1.2; 16 float32 1.9-3.6 against 7.1-7.7, 7 float32
// 0.6-1.3 against 3.4-3.7, 4 float64 0.29 against 0.67, 8 uint8 0.76 against 2.9.
inline bool reverse_rows_by_tiles(const ReversedRuns& plan, std::size_t element_bytes) noexcept {
  const std::uint64_t row_bytes = plan.walk.inner_size() * element_bytes;
  const bool narrow_rows = row_bytes <= kReverseNarrowRowBytes &&
                           !(element_bytes <= 2 && row_bytes >= 32);
  return !narrow_rows && reverse_by_tiles(plan);
}

// The length `count` runs share from position `first` of `lengths` on, or nullopt where they
// differ.
template <class Deferred = void>
inline std::optional<std::uint64_t> shared_run_length(const void* lengths, RunLengthsFn lengths_of,
                                                      std::int64_t first, std::int64_t step,
                                                      std::uint64_t count, std::uint64_t n) {
  std::array<std::uint64_t, kIndexChunk> length;
  std::uint64_t l0 = 0;
  for (std::uint64_t c0 = 0; c0 < count; c0 += kIndexChunk) {
    const std::uint64_t chunk = std::min(kIndexChunk, count - c0);
    lengths_of(lengths, first + static_cast<std::int64_t>(c0) * step, step, chunk, n,
               length.data());
    if (c0 == 0) l0 = length[0];
    const auto end = length.begin() + static_cast<std::ptrdiff_t>(chunk);
    if (!std::all_of(length.begin(), end, [l0](std::uint64_t l) { return l == l0; })) {
      return std::nullopt;
    }
  }
  return l0;
}

// The elements from one run to the next in reverse_runs_by_tiles' buffer: n rounded up to whole
// cache lines, and a line more where that is a multiple of 1 KiB, so that the lines the
// transposes fill at once (one per run) do not all fall in one set of the L1 cache (16 MiB
// float32 {4096, 1024}, one core: 3.7-3.8 ms with a pitch of 16 KiB, 3.4 ms with a line more).
template <class W>
constexpr std::uint64_t reverse_tile_pitch(std::uint64_t n) noexcept {
  constexpr std::uint64_t line = 64 / sizeof(W);
  const std::uint64_t pitch = (n + line - 1) / line * line;
  return pitch * sizeof(W) % 1024 == 0 ? pitch + line : pitch;
}

// `count` runs side by side along an axis of n positions (rows in_axis and out_axis elements
// apart, the runs one element apart), run j reversed up to its length (read by `lengths_of` at
// len_first + j * len_step): a tile of runs one cache line wide at a time, transposed into
// `buffer` (each run then contiguous), reversed there into its second half, and transposed
// back. The tensors are then read and written a whole line of a row at a time, instead of one
// element per line (and per page, for rows of 4 KiB) from rows far apart. bench_table's
// peers/reverse_axis0 (float32 {rows, 1024} along axis 0, a random length per column), one
// core: 16 MiB 0.07 to 0.19 of memcpy, 256 MiB 0.03 to 0.17; its matrix shapes of 128 to 8101
// positions 1.6 to 2.2 times as fast as in groups.
// `buffer`: 2 * tile * reverse_tile_pitch<W>(n) elements, tile (the runs a tile takes) at most
// kReverseTileBytes / sizeof(W).
template <class W>
void reverse_runs_by_tiles(const W* src, std::int64_t in_axis, W* dst, std::int64_t out_axis,
                           const void* lengths, RunLengthsFn lengths_of, std::int64_t len_first,
                           std::int64_t len_step, std::uint64_t count, std::uint64_t n,
                           W* buffer, std::uint64_t tile, bool stream) {
  constexpr auto w = static_cast<std::int64_t>(sizeof(W));
  const std::uint64_t pitch = reverse_tile_pitch<W>(n);
  const auto pw = static_cast<std::int64_t>(pitch) * w;
  W* const across = buffer;                   // the tile's runs, run j at across + j * pitch
  W* const reversed = buffer + tile * pitch;  // the same, each reversed up to its length
  // The first tile ends at a cache line of dst's first row, so that the others each write whole
  // lines (and may stream them): with tiles across lines, each line was written in two sweeps of
  // the axis (256 MiB float32 {65536, 1024}, both tensors 16 bytes past a line, one core: 0.08
  // of memcpy, 0.16 with the first tile cut short, 0.19 for tensors on a line).
  const std::uint64_t to_line = elements_to_line(dst, sizeof(W));
  const std::uint64_t first = to_line == 0 ? tile : std::min(tile, to_line);
  for (std::uint64_t j0 = 0, width = first; j0 < count; j0 += width, width = tile) {
    width = std::min(width, count - j0);
    const auto at = static_cast<std::int64_t>(j0);
    std::array<std::uint64_t, kReverseTileBytes> length;  // a tile's runs: at most one per byte
    lengths_of(lengths, len_first + at * len_step, len_step, width, n, length.data());
    transpose_bytes<sizeof(W)>({reinterpret_cast<const unsigned char*>(src + at), in_axis * w,
                                reinterpret_cast<unsigned char*>(across), pw, width, n});
    for (std::uint64_t j = 0; j < width; ++j) {
      const W* const run = across + j * pitch;
      W* const out = reversed + j * pitch;
      const std::uint64_t l = length[j];
      copy_run_reversed(run, out, l);
      copy_run(run + l, 1, out + l, 1, n - l);
    }
    transpose_bytes<sizeof(W)>({reinterpret_cast<const unsigned char*>(reversed), pw,
                                reinterpret_cast<unsigned char*>(dst + at), out_axis * w, n,
                                width, stream});
  }
}

// `count` runs side by side (run j from src + j * in_run, to dst + j * out_run, rows in_axis and
// out_axis elements apart), run j reversed up to lens[j]: positions [a0, a1) of the axis, in
// three spans split where the runs' shortest and longest lengths fall. Below the shortest every
// run is reversed, from the longest on every run is copied, and only between them is each
// element's source chosen; each run's source moves by one row per position, a line every few
// positions in a narrow row, which the hardware's prefetch follows with no request per element.
// Rows of 7 float32 along axis 0 (16 MiB, a random length per column, one core): 14.1 -> 3.4
// ms; of 7 uint8 53 -> 11; of 16 float32 at 128 MiB 118 -> 48. Rows of 256 bytes ran slower
// so (93 -> 108 ms at 64 MiB): each run's next element is then a line of its own.
template <class W>
void reverse_narrow_rows(const W* src, std::int64_t in_run, std::int64_t in_axis, W* dst,
                         std::int64_t out_run, std::int64_t out_axis, const std::uint64_t* lens,
                         std::uint64_t count, std::uint64_t a0, std::uint64_t a1) {
  std::uint64_t shortest = a1, longest = 0;
  std::array<std::int64_t, kIndexChunk> top;  // run j's source at position 0 when reversed
  for (std::uint64_t j = 0; j < count; ++j) {
    shortest = std::min(shortest, lens[j]);
    longest = std::max(longest, lens[j]);
    top[j] = (static_cast<std::int64_t>(lens[j]) - 1) * in_axis +
             static_cast<std::int64_t>(j) * in_run;
  }
  const std::uint64_t reversed_end = std::clamp(shortest, a0, a1);
  const std::uint64_t copied_from = std::clamp(longest, reversed_end, a1);
  // Locals: store_bits's memcpy may alias anything, so values read through a closure or the
  // array would be reloaded after every element.
  const std::int64_t* const tops = top.data();
  for (std::uint64_t a = a0; a < reversed_end; ++a) {
    const auto at = static_cast<std::int64_t>(a);
    for (std::uint64_t j = 0; j < count; ++j) {
      const auto jj = static_cast<std::int64_t>(j);
      store_bits(dst + (at * out_axis + jj * out_run), load_bits(src + (tops[j] - at * in_axis)));
    }
  }
  for (std::uint64_t a = reversed_end; a < copied_from; ++a) {
    const auto at = static_cast<std::int64_t>(a);
    for (std::uint64_t j = 0; j < count; ++j) {
      const auto jj = static_cast<std::int64_t>(j);
      const std::int64_t from = a < lens[j] ? tops[j] - at * in_axis : at * in_axis + jj * in_run;
      store_bits(dst + (at * out_axis + jj * out_run), load_bits(src + from));
    }
  }
  for (std::uint64_t a = copied_from; a < a1; ++a) {
    const auto at = static_cast<std::int64_t>(a);
    for (std::uint64_t j = 0; j < count; ++j) {
      const auto jj = static_cast<std::int64_t>(j);
      store_bits(dst + (at * out_axis + jj * out_run),
                 load_bits(src + (at * in_axis + jj * in_run)));
    }
  }
}

// Executes ReversedRuns with elements as W: per run, its first L elements reversed and the rest
// copied, or, when runs lie side by side, all of them one axis position at a time.
template <class W>
void reverse_runs_part(const ReversedRuns& plan, const PlanBase& base, const W* in,
                       const void* lengths, W* out, RunLengthsFn lengths_of, bool stream,
                       std::uint64_t a0, std::uint64_t a1) {
  const std::uint64_t n = plan.axis_size;
  const std::int64_t in_step = plan.in_step;
  const std::int64_t out_step = plan.out_step;
  const std::uint64_t inner = plan.walk.inner_size();
  const std::int64_t in_inner = plan.walk.inner_stride(0);
  const std::int64_t len_inner = plan.walk.inner_stride(1);
  const std::int64_t out_inner = plan.walk.inner_stride(2);
  const bool unit = in_step == 1 && out_step == 1;
  if (!unit && inner > 1) {
    // Runs side by side (the axis not the innermost dimension): walking one run at a time would
    // touch a new cache line per element. Walk the axis outermost instead, so each step reads and
    // writes a row of neighbouring elements. Where runs share one length each such row comes
    // from one source row and moves as one run; otherwise the source row is chosen per run, in
    // groups whose whole extent along the axis fits in the L1 cache (kSlabBytes), so each source
    // row a group reads from stays cached until all are done.
    // Where every run of a walk's innermost dimension has one length (full or broadcast
    // lengths, the common case), its rows move whole, not a chunk of kIndexChunk runs at a time:
    // chunks would sweep the tensor once each, reading a part of every row (256 MiB {65536, 1024}
    // float32 along axis 0, full lengths, one core: 0.45 of a copy in chunks of 256 columns,
    // bench/peers.py; whole rows, bench_table's reverse_axis0: 0.98 of memcpy).
    // Where the runs are one element apart in both tensors, runs of different lengths go tile by
    // tile instead (reverse_runs_by_tiles), and the groups below serve other strides, short
    // axes, and axes too long for the tiles' buffer.
    // Where even 16 runs' extent along the axis overflows the L1 cache, each element is a line
    // of its own row (a page apart in a tensor of 4 KiB rows): the loop waits on one load after
    // another, so it takes whole chunks and asks for each run's element kReverseAheadRows
    // positions ahead. bench_table peers/reverse_axis0 (float32 along axis 0, a random length
    // per column, one core, five alternating runs on a busy machine): 256 MiB {65536, 1024}
    // 0.017-0.027 of memcpy in groups of 16 runs, 0.031-0.037 in chunks with the requests; at
    // 16 MiB (the source fits the L3 cache) 0.03-0.09 either way.
    const std::uint64_t fit = kSlabBytes / (n * sizeof(W));
    const bool ahead_rows = fit < 16;
    const std::uint64_t group = ahead_rows ? kIndexChunk : std::min(fit, kIndexChunk);
    const std::uint64_t axis_size = n;
    const std::int64_t is = in_inner, os = out_inner, ia = in_step, oa = out_step;
    // `count` runs from position `start` of the run at `o`, sharing length `l0`: whole rows,
    // visited in source order. Reversal is its own inverse, so source row `from` goes to output
    // row reversed_source(from): the reads form one ascending stream the prefetcher follows; the
    // writes go out in descending rows, which streaming stores do not mind (16 MiB REVERSE along
    // axis 0, bench_table, idle: 0.43-0.46 of memcpy in output order, 1.08-1.14 in source order).
    // Rows of neighbouring elements are runs of bytes: those reversed and those after them go
    // in one call of copy_runs each, the first with a negative step, so narrow rows are copies
    // of a constant size (16 MiB of rows of 3 float32, one core: 0.21 of memcpy a row at a time).
    const auto rows_of_one_length = [&](const W* src, W* dst, std::uint64_t count,
                                        std::uint64_t l0) {
      if (is == 1 && os == 1) {
        const auto* const from = reinterpret_cast<const unsigned char*>(src);
        auto* const to = reinterpret_cast<unsigned char*>(dst);
        const auto width = static_cast<std::int64_t>(sizeof(W));
        // Positions [a0, mid) are reversed, [mid, a1) copied (l0 is at most the axis size).
        const std::uint64_t mid = std::clamp(l0, a0, a1);
        // Streamed: rows of kStreamMinRunBytes or more, and narrower rows that fill the output
        // back to back and stream whole (streams_aligned; 16 MiB of 64-byte rows, one core: 0.9
        // of memcpy with ordinary stores, 1.5 streamed).
        const std::size_t row_bytes = count * sizeof(W);
        const bool whole_lines = oa * width == static_cast<std::int64_t>(row_bytes) &&
                                 stream_rows_aligned(to, oa * width, row_bytes);
        const std::size_t stream_min = !stream ? 0 : whole_lines ? 1 : kStreamMinRunBytes;
        const auto at = [](std::uint64_t a) { return static_cast<std::int64_t>(a); };
        if (mid > a0) {
          // Reversed rows go out in descending order: narrower than kStreamReversedRowMinBytes,
          // they take ordinary stores.
          copy_runs(from + at(a0) * ia * width, ia * width,
                    to + at(reversed_source(a0, l0, axis_size)) * oa * width, -oa * width,
                    mid - a0, row_bytes, row_bytes < kStreamReversedRowMinBytes ? 0 : stream_min);
        }
        if (a1 > mid) {
          copy_runs(from + at(mid) * ia * width, ia * width, to + at(mid) * oa * width,
                    oa * width, a1 - mid, row_bytes, stream_min);
        }
        return;
      }
      for (std::uint64_t f = a0; f < a1; ++f) {
        const auto from = static_cast<std::int64_t>(f);
        const auto at = static_cast<std::int64_t>(reversed_source(f, l0, axis_size));
        copy_run(src + from * ia, is, dst + at * oa, os, count);
      }
    };
    std::array<std::uint64_t, kIndexChunk> length;
    // The tiles' buffer (Scratch), taken when a row of runs first needs it, where tiles apply (to
    // the whole axis only); where it cannot be had, the groups below do the work.
    bool tiles_apply = a0 == 0 && a1 == n && reverse_rows_by_tiles(plan, sizeof(W));
    const std::uint64_t tile = std::min<std::uint64_t>(kReverseTileBytes / sizeof(W), inner);
    Scratch tiles_memory;
    W* tiles = nullptr;
    walk_runs<3>(plan.walk, [&](const std::array<std::int64_t, 3>& o) {
      const std::optional<std::uint64_t> one_length =
          shared_run_length(lengths, lengths_of, o[1], len_inner, inner, n);
      if (one_length) return rows_of_one_length(in + o[0], out + o[2], inner, *one_length);
      if (tiles_apply && tiles == nullptr) {
        tiles_apply = tiles_memory.reserve(2 * tile * reverse_tile_pitch<W>(n) * sizeof(W));
        tiles = static_cast<W*>(tiles_memory.data());
      }
      if (tiles_apply) {
        return reverse_runs_by_tiles(in + o[0], in_step, out + o[2], out_step, lengths, lengths_of,
                                     o[1], len_inner, inner, n, tiles, tile, stream);
      }
      for (std::uint64_t c0 = 0; c0 < inner; c0 += kIndexChunk) {
        const std::uint64_t count = std::min(kIndexChunk, inner - c0);
        const auto start = static_cast<std::int64_t>(c0);
        lengths_of(lengths, o[1] + start * len_inner, len_inner, count, n, length.data());
        const W* const src = in + (o[0] + start * in_inner);
        W* const dst = out + (o[2] + start * out_inner);
        const std::uint64_t c_l0 = length[0];
        if (std::all_of(length.begin(), length.begin() + static_cast<std::ptrdiff_t>(count),
                        [c_l0](std::uint64_t l) { return l == c_l0; })) {
          rows_of_one_length(src, dst, count, c_l0);
          continue;
        }
        // Locals: store_bits's memcpy may alias anything, so values read through the closure
        // would be reloaded after every element.
        const std::uint64_t size = axis_size, first = a0, last = a1;
        const std::int64_t in_run = is, out_run = os, in_axis = ia, out_axis = oa;
        const std::uint64_t* const lens = length.data();
        if (count * static_cast<std::uint64_t>(std::abs(in_run)) * sizeof(W) <=
            kReverseNarrowRowBytes) {
          reverse_narrow_rows(src, in_run, in_axis, dst, out_run, out_axis, lens, count, first,
                              last);
          continue;
        }
        const bool prefetch_ahead = ahead_rows;
        for (std::uint64_t g0 = 0; g0 < count; g0 += group) {
          const std::uint64_t g1 = std::min(count, g0 + group);
          for (std::uint64_t a = first; a < last; ++a) {
            const auto at = static_cast<std::int64_t>(a);
            if (prefetch_ahead && a + kReverseAheadRows < last) {
              const std::uint64_t ahead = a + kReverseAheadRows;
              for (std::uint64_t j = g0; j < g1; ++j) {
                const auto jj = static_cast<std::int64_t>(j);
                const auto from = static_cast<std::int64_t>(reversed_source(ahead, lens[j], size));
                prefetch_bytes(src + (from * in_axis + jj * in_run), 1);
              }
            }
            for (std::uint64_t j = g0; j < g1; ++j) {
              const auto jj = static_cast<std::int64_t>(j);
              const auto from = static_cast<std::int64_t>(reversed_source(a, lens[j], size));
              store_bits(dst + (at * out_axis + jj * out_run),
                         load_bits(src + (from * in_axis + jj * in_run)));
            }
          }
        }
      }
    }, base);
    if (stream) stream_fence();
    return;
  }
  // Short runs (kReverseShortRun) take the element loop below, or under AVX2 one shuffle per
  // run where they are 2 bytes long or more.
  const bool short_runs = n <= kReverseShortRun;
#if DMLREF_ENGINE_AVX2
  if (unit && (!short_runs || n * sizeof(W) >= 2) && engine_avx2_enabled()) {
    return reverse_contiguous_runs_avx2(plan, base, in, lengths, out, lengths_of, sizeof(W));
  }
#endif
  walk_index_chunks(plan.walk, [&](const std::array<std::int64_t, 3>& o, std::int64_t start,
                                   std::uint64_t count) {
    std::array<std::uint64_t, kIndexChunk> length;
    const auto j0 = static_cast<std::uint64_t>(start), j1 = j0 + count;
    lengths_of(lengths, o[1] + start * len_inner, len_inner, count, n, length.data());
    // Locals: store_bits's memcpy may alias anything, so values read through the closure would
    // be reloaded after every element.
    const std::int64_t sa = in_step, da = out_step;
    const std::uint64_t size = n;
    for (std::uint64_t j = j0; j < j1; ++j) {
      const auto i = static_cast<std::int64_t>(j);
      const W* src = in + (o[0] + i * in_inner);
      W* dst = out + (o[2] + i * out_inner);
      const std::uint64_t l = length[j - j0];
      if (short_runs) {
        // Each element read from where the reversal takes it, with no branch on the length.
        for (std::uint64_t a = 0; a < size; ++a) {
          const auto from = static_cast<std::int64_t>(reversed_source(a, l, size));
          store_bits(dst + static_cast<std::int64_t>(a) * da, load_bits(src + from * sa));
        }
        continue;
      }
      if (l > 0) {
        if (unit) {
          copy_run_reversed(src, dst, l);
        } else {
          // Walk the source backwards from its last reversed element.
          copy_run(src + static_cast<std::int64_t>(l - 1) * sa, -sa, dst, da, l);
        }
      }
      if (l < size) {
        const auto ll = static_cast<std::int64_t>(l);
        copy_run(src + ll * sa, sa, dst + ll * da, da, size - l);
      }
    }
  }, base);
}

// Whether every innermost row of runs of `plan` shares one length (reverse_runs_part then moves
// whole rows).
template <class Deferred = void>
inline bool runs_share_lengths_by_row(const ReversedRuns& plan, const void* lengths,
                                      RunLengthsFn lengths_of) {
  bool shared = true;
  walk_runs<3>(plan.walk, [&](const std::array<std::int64_t, 3>& o) {
    shared = shared && shared_run_length(lengths, lengths_of, o[1], plan.walk.inner_stride(1),
                                         plan.walk.inner_size(), plan.axis_size)
                           .has_value();
  });
  return shared;
}

// reverse_runs_part over parts of the walk on the engine's threads: each run has its own output
// elements, so any split writes the same bytes. Streaming is decided once, from the whole output.
template <class W>
void reverse_runs(const ReversedRuns& plan, const W* in, const void* lengths, W* out,
                  RunLengthsFn lengths_of) {
  const std::uint64_t bytes = plan.walk.run_count() * plan.walk.inner_size() * plan.axis_size *
                              sizeof(W);
  const bool stream = bytes >= kStreamMinBytes;
  const std::uint64_t n = plan.axis_size;
  const bool side_by_side =
      !(plan.in_step == 1 && plan.out_step == 1) && plan.walk.inner_size() > 1;
  const std::size_t parts = parallel_parts(bytes, ~std::uint64_t{0});
  // Tiles take the whole axis: where they apply (runs of different lengths), threads take runs.
  // Narrow rows, which take no tiles, take ranges of the axis below like any other rows: split
  // into runs, their threads would write parts of the same cache lines (16 MiB float64 {4, 74897,
  // 7} along axis 1, a random length per column, two threads: 8.1 ms against 2.1 on one).
  const bool by_tiles = side_by_side && parts > 1 && reverse_rows_by_tiles(plan, sizeof(W)) &&
                        !runs_share_lengths_by_row(plan, lengths, lengths_of);
  if (side_by_side && n >= parts && !by_tiles) {
    // Runs side by side, walked one axis position at a time: where the axis has a position for
    // every part, threads take consecutive ranges of it (source positions where a chunk's runs
    // share a length, output positions otherwise), so each reads and writes whole rows of
    // neighbouring elements, not a few columns of every row.
    parallel_ranges(parts, n, [&](std::uint64_t a0, std::uint64_t a1) {
      reverse_runs_part(plan, PlanBase{}, in, lengths, out, lengths_of, stream, a0, a1);
    });
    return;
  }
  // Where tiles take rows of runs split among threads, the rows are cut where the output's first
  // row reaches a cache line: cut elsewhere, the line across a cut is written by two threads on
  // every row (256 MiB float32 {65536, 1024} 16 bytes past a line, two threads: no faster than
  // one, and 1.75 times as fast with these cuts).
  const std::uint32_t inner_dim = plan.walk.rank - 1;
  const std::uint64_t line = 64 / sizeof(W), runs = plan.walk.inner_size();
  const std::uint64_t head = std::min(runs, elements_to_line(out, sizeof(W)));
  const std::uint64_t lines = (head > 0 ? 1 : 0) + (runs - head + line - 1) / line;
  if (by_tiles && lines >= 2 && split_dimensions(plan.walk, parts).last == inner_dim) {
    const auto first_run = [&](std::uint64_t k) {  // of the k-th piece of a row cut so
      return k == 0 ? 0 : std::min(runs, head + (k - (head > 0 ? 1 : 0)) * line);
    };
    parallel_ranges(std::min<std::uint64_t>(parts, lines), lines,
                    [&](std::uint64_t k0, std::uint64_t k1) {
      ReversedRuns part = plan;
      PlanBase base{};
      narrow_plan(part.walk, base, inner_dim, first_run(k0), first_run(k1));
      reverse_runs_part(part, base, in, lengths, out, lengths_of, stream, 0, n);
    });
    return;
  }
  for_each_plan_part(plan.walk, bytes, [&](const CopyPlan& walk, const PlanBase& base) {
    ReversedRuns part = plan;
    part.walk = walk;
    reverse_runs_part(part, base, in, lengths, out, lengths_of, stream, 0, n);
  });
}

}  // namespace dmlref::detail
