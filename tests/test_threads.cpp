// The engine's threads (parallel.hpp): every operator's fast path, split into parts on 1, 2, 3
// and 8 threads, diffed against the plain reference loops on seeded random shapes (all eleven
// types, ranks 1-8, every axis, padded, transposed, broadcast and reversed operands, SCATTER's
// duplicates), with the size thresholds lowered so that even these small tensors are split as
// finely as the thread count allows. Also: the thread count's API and environment variable, and
// that small calls never reach the pool. scripts/test.sh --thread runs this program under
// ThreadSanitizer.
#include "test_support.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace test_threads {  // this file's own names (tests/CMakeLists.txt: unity groups)

using namespace dmlref;

namespace {

using test::random_operand;
using test::same_buffers;
using test::sentinel_buffer;
using Operand = test::RandomOperand;
using Sizes = std::vector<std::uint32_t>;

constexpr std::uint32_t kThreadCounts[] = {1, 2, 3, 8};
constexpr int kCases = 24;  // per operator, type and thread count

// For the scope of a test: `threads` threads, and calls of any size split into parts of any size
// (one element and up), so the random shapes below cross every part boundary the engine can make;
// SCATTER's indices are narrowed whatever their count.
class Split {
 public:
  explicit Split(std::uint32_t threads) {
    set_num_threads(threads);
    detail::parallel_min_bytes = 1;
    detail::parallel_part_bytes = 1;
    detail::narrow_min_indices = 1;  // SCATTER's SC8 pass narrows every call's indices
  }
  Split(const Split&) = delete;
  Split& operator=(const Split&) = delete;
  ~Split() {
    set_num_threads(0);
    detail::parallel_min_bytes = detail::kParallelMinBytes;
    detail::parallel_part_bytes = detail::kParallelPartBytes;
    detail::narrow_min_indices = detail::kNarrowMinIndices;
  }
};

// Sizes 1-7 at ranks 1-4 and 1-3 above, so rank 8 stays a few thousand elements.
Sizes random_sizes(std::mt19937& rng, std::size_t rank) {
  Sizes sizes(rank);
  const std::uint32_t most = rank <= 4 ? 7 : 3;
  for (auto& s : sizes) s = 1 + static_cast<std::uint32_t>(rng() % most);
  return sizes;
}

template <class T>
TensorView<const T> view_of(const std::vector<T>& buffer, const Operand& op) {
  return TensorView<const T>(buffer.data() + op.origin, op.layout);
}
template <class T>
TensorView<T> view_of(std::vector<T>& buffer, const Operand& op) {
  return TensorView<T>(buffer.data() + op.origin, op.layout);
}

void check_case(const char* op, std::uint32_t threads, int iteration, const Layout& layout,
                bool same) {
  CAPTURE(op);
  CAPTURE(threads);
  CAPTURE(iteration);
  CHECK_MESSAGE(same, "Sizes ", layout.sizes_string());
}

template <class T>
void diff_strided_copy(std::uint32_t threads, std::mt19937& rng) {
  for (int i = 0; i < kCases; ++i) {
    const Sizes sizes = random_sizes(rng, static_cast<std::size_t>(1 + i % 8));
    const Operand src = random_operand(rng, sizes, true, true);
    const Operand dst = random_operand(rng, sizes, false, true);
    const std::vector<T> in = test::distinct_buffer<T>(src.elements);
    std::vector<T> golden = sentinel_buffer<T>(dst.elements), fast = golden;
    reference_copy<T>(view_of(in, src), view_of(golden, dst));
    strided_copy<T>(view_of(in, src), view_of(fast, dst));
    check_case("strided_copy", threads, i, dst.layout, same_buffers(golden, fast));
  }
}

template <class T>
void diff_join_split(std::uint32_t threads, std::mt19937& rng) {
  for (int i = 0; i < kCases; ++i) {
    const auto rank = static_cast<std::size_t>(1 + i % 8);
    Sizes whole = random_sizes(rng, rank);
    const auto axis = static_cast<std::uint32_t>(rng() % rank);
    std::vector<Sizes> pieces(1 + rng() % 5, whole);
    whole[axis] = 0;
    for (Sizes& p : pieces) whole[axis] += p[axis] = 1 + static_cast<std::uint32_t>(rng() % 4);
    // JOIN: pieces in, the whole out.
    std::vector<Operand> ops;
    std::vector<std::vector<T>> buffers;
    std::vector<TensorView<const T>> views;
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      ops.push_back(random_operand(rng, pieces[k], true, true));
      buffers.push_back(test::distinct_buffer<T>(ops.back().elements, 1000 * k));
    }
    for (std::size_t k = 0; k < ops.size(); ++k) views.push_back(view_of(buffers[k], ops[k]));
    const Operand out = random_operand(rng, whole, false, true);
    std::vector<T> golden = sentinel_buffer<T>(out.elements), fast = golden;
    reference::join<T>(views, view_of(golden, out), axis);
    join<T>(views, view_of(fast, out), axis);
    check_case("join", threads, i, out.layout, same_buffers(golden, fast));
    // SPLIT: the whole in, pieces out.
    const Operand in = random_operand(rng, whole, true, true);
    const std::vector<T> in_buffer = test::distinct_buffer<T>(in.elements);
    std::vector<Operand> outs;
    std::vector<std::vector<T>> goldens, fasts;
    for (const Sizes& p : pieces) {
      outs.push_back(random_operand(rng, p, false, true));
      goldens.push_back(sentinel_buffer<T>(outs.back().elements));
      fasts.push_back(goldens.back());
    }
    std::vector<TensorView<T>> golden_views, fast_views;
    for (std::size_t k = 0; k < outs.size(); ++k) {
      golden_views.push_back(view_of(goldens[k], outs[k]));
      fast_views.push_back(view_of(fasts[k], outs[k]));
    }
    reference::split<T>(view_of(in_buffer, in), golden_views, axis);
    split<T>(view_of(in_buffer, in), fast_views, axis);
    bool same = true;
    for (std::size_t k = 0; k < outs.size(); ++k) same = same && same_buffers(goldens[k], fasts[k]);
    check_case("split", threads, i, in.layout, same);
  }
}

// A random index for an axis of n: in [-n, n) for signed types, [0, n) for unsigned ones, or
// anywhere under `clamp`.
template <class I>
I random_index(std::mt19937& rng, std::uint32_t n, bool clamp) {
  const std::int64_t span = clamp ? 3 * static_cast<std::int64_t>(n) + 2 : n;
  if constexpr (std::is_signed_v<I>) {
    return static_cast<I>(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(2 * span)) -
                          span);
  } else {
    return static_cast<I>(rng() % static_cast<std::uint64_t>(span));
  }
}

// SCATTER with indices longer than the input along Axis, so updates collide: the last in the
// indices' row-major order must win on every thread count.
template <class T, class I>
void diff_scatter(std::uint32_t threads, std::mt19937& rng) {
  for (int i = 0; i < kCases; ++i) {
    const auto rank = static_cast<std::size_t>(1 + i % 8);
    const Sizes sizes = random_sizes(rng, rank);
    const auto axis = static_cast<std::uint32_t>(rng() % rank);
    Sizes ix_sizes = sizes;  // SC7: the input's sizes except along Axis
    ix_sizes[axis] = 1 + static_cast<std::uint32_t>(rng() % (2 * sizes[axis] + 2));
    ScatterOptions options;
    const bool clamp = rng() % 4 == 0;
    options.index_policy = clamp ? IndexPolicy::Clamp : IndexPolicy::Error;
    const Operand in = random_operand(rng, sizes, true, true);
    const Operand ix = random_operand(rng, ix_sizes, true, true);
    const Operand up = random_operand(rng, ix_sizes, true, true);
    const Operand out = random_operand(rng, sizes, false, true);
    const std::vector<T> in_buffer = test::distinct_buffer<T>(in.elements);
    const std::vector<T> up_buffer = test::distinct_buffer<T>(up.elements, 5000);
    std::vector<I> ix_buffer(ix.elements);
    for (I& v : ix_buffer) v = random_index<I>(rng, sizes[axis], clamp);
    std::vector<T> golden = sentinel_buffer<T>(out.elements), fast = golden;
    const TensorView<const I> indices(ix_buffer.data() + ix.origin, ix.layout);
    reference::scatter<T, I>(view_of(in_buffer, in), indices, view_of(up_buffer, up),
                             view_of(golden, out), axis, options);
    scatter<T, I>(view_of(in_buffer, in), indices, view_of(up_buffer, up), view_of(fast, out),
                  axis, options);
    check_case("scatter", threads, i, ix.layout, same_buffers(golden, fast));
  }
}

// GATHER_ND1 over random geometries: tuples of m coordinates, any r and q that fit the rank.
template <class T, class I>
void diff_gather(std::uint32_t threads, std::mt19937& rng) {
  for (int i = 0; i < kCases; ++i) {
    const auto rank = static_cast<std::uint32_t>(1 + i % 8);
    // r meaningful input dimensions, tuples of m <= r coordinates, q meaningful index dimensions,
    // so that the output's (q - 1) + (r - m) fit in the rank (G9); leading dimensions are 1.
    const std::uint32_t r = 1 + static_cast<std::uint32_t>(rng() % rank);
    const std::uint32_t m = 1 + static_cast<std::uint32_t>(rng() % r);
    const std::uint32_t q = 1 + static_cast<std::uint32_t>(rng() % (rank - (r - m)));
    Sizes in_sizes = random_sizes(rng, rank), ix_sizes = random_sizes(rng, rank);
    std::fill(in_sizes.begin(), in_sizes.end() - r, 1u);
    std::fill(ix_sizes.begin(), ix_sizes.end() - q, 1u);
    ix_sizes[rank - 1] = m;
    const Sizes out_sizes = infer_gather_nd1_output_sizes(in_sizes, ix_sizes, r, q, 0);
    GatherNd1Options options;
    const bool clamp = rng() % 4 == 0;
    options.index_policy = clamp ? IndexPolicy::Clamp : IndexPolicy::Error;
    const Operand in = random_operand(rng, in_sizes, true, true);
    // No broadcast: one index reused along a tuple would select in dimensions of other sizes.
    const Operand ix = random_operand(rng, ix_sizes, false, true);
    const Operand out = random_operand(rng, out_sizes, false, true);
    const std::vector<T> in_buffer = test::distinct_buffer<T>(in.elements);
    std::vector<I> ix_buffer(ix.elements);
    for_each_coordinate(ix.layout, [&](const Coord& c) {
      ix_buffer[static_cast<std::size_t>(ix.origin + ix.layout.offset(c))] =
          random_index<I>(rng, in_sizes[rank - r + c[rank - 1]], clamp);
    });
    std::vector<T> golden = sentinel_buffer<T>(out.elements), fast = golden;
    const TensorView<const I> indices(ix_buffer.data() + ix.origin, ix.layout);
    reference::gather_nd1<T, I>(view_of(in_buffer, in), indices, view_of(golden, out), r, q, 0,
                                options);
    gather_nd1<T, I>(view_of(in_buffer, in), indices, view_of(fast, out), r, q, 0, options);
    check_case("gather_nd1", threads, i, out.layout, same_buffers(golden, fast));
  }
}

template <class T, class L>
void diff_reverse(std::uint32_t threads, std::mt19937& rng) {
  for (int i = 0; i < kCases; ++i) {
    const auto rank = static_cast<std::size_t>(1 + i % 8);
    const Sizes sizes = random_sizes(rng, rank);
    const auto axis = static_cast<std::uint32_t>(rng() % rank);
    Sizes len_sizes = sizes;
    len_sizes[axis] = 1;
    const Operand in = random_operand(rng, sizes, true, true);
    const Operand len = random_operand(rng, len_sizes, true, true);
    const Operand out = random_operand(rng, sizes, false, true);
    const std::vector<T> in_buffer = test::distinct_buffer<T>(in.elements);
    std::vector<L> len_buffer(len.elements);
    for (L& l : len_buffer) l = static_cast<L>(rng() % (sizes[axis] + 2));  // some past the end
    std::vector<T> golden = sentinel_buffer<T>(out.elements), fast = golden;
    const TensorView<const L> lengths(len_buffer.data() + len.origin, len.layout);
    reference::reverse_subsequences<T, L>(view_of(in_buffer, in), lengths, view_of(golden, out),
                                          axis);
    reverse_subsequences<T, L>(view_of(in_buffer, in), lengths, view_of(fast, out), axis);
    check_case("reverse_subsequences", threads, i, out.layout, same_buffers(golden, fast));
  }
}

}  // namespace

TEST_CASE_TEMPLATE("threads: every operator's fast path equals the golden loop, 1, 2, 3, 8 threads",
                   T, DMLREF_ALL_TYPES) {
  for (const std::uint32_t threads : kThreadCounts) {
    std::mt19937 rng(20261126u + threads * 101u + static_cast<unsigned>(sizeof(T)));
    const Split split(threads);
    // Each diff must reach the pool on more than one thread (and never on one): a split that
    // stopped happening would still give the golden result, on the calling thread alone.
    const auto split_happens = [threads](const char* op, auto diff) {
      const bool pooled = test::reaches_thread_pool(diff);
      CAPTURE(op);
      CAPTURE(threads);
      CHECK(pooled == (threads > 1));
    };
    split_happens("strided_copy", [&] { diff_strided_copy<T>(threads, rng); });
    split_happens("join, split", [&] { diff_join_split<T>(threads, rng); });
    split_happens("scatter", [&] { diff_scatter<T, std::int32_t>(threads, rng); });
    split_happens("scatter", [&] { diff_scatter<T, std::uint64_t>(threads, rng); });
    split_happens("gather_nd1", [&] { diff_gather<T, std::int64_t>(threads, rng); });
    split_happens("gather_nd1", [&] { diff_gather<T, std::uint32_t>(threads, rng); });
    split_happens("reverse_subsequences", [&] { diff_reverse<T, std::uint32_t>(threads, rng); });
    split_happens("reverse_subsequences", [&] { diff_reverse<T, std::uint64_t>(threads, rng); });
  }
}

TEST_CASE("threads: the runtime layer splits as the typed one, on 3 threads") {
  // SCATTER of float32 along axis 1 of {6, 40, 5} with every update colliding four times, and a
  // JOIN of three pieces along axis 1: through the descriptions a GPU harness passes.
  const Split split(3);
  const std::vector<std::uint32_t> in_sizes = {6, 40, 5}, ix_sizes = {6, 160, 5};
  std::vector<float> in = test::distinct_buffer<float>(6 * 40 * 5);
  std::vector<float> up = test::distinct_buffer<float>(6 * 160 * 5, 7000);
  std::vector<std::int32_t> ix(6 * 160 * 5);
  std::mt19937 rng(36);
  for (auto& v : ix) v = static_cast<std::int32_t>(rng() % 40);
  std::vector<float> golden(in.size()), fast(in.size());
  const TensorDesc in_desc(DataType::Float32, in_sizes);
  const TensorDesc ix_desc(DataType::Int32, ix_sizes);
  const TensorDesc up_desc(DataType::Float32, ix_sizes);
  const BufferTensorDesc descs[] = {in_desc.desc(), ix_desc.desc(), up_desc.desc(),
                                    in_desc.desc()};
  const ScatterOperatorDesc desc{&descs[0], &descs[1], &descs[2], &descs[3], 1};
  const auto bytes = [](const auto& v) { return v.size() * sizeof(v[0]); };
  reference::scatter(desc, {in.data(), bytes(in)}, {ix.data(), bytes(ix)}, {up.data(), bytes(up)},
                     {golden.data(), bytes(golden)});
  CHECK(test::reaches_thread_pool([&] {  // it did split
    scatter(desc, {in.data(), bytes(in)}, {ix.data(), bytes(ix)}, {up.data(), bytes(up)},
            {fast.data(), bytes(fast)});
  }));
  CHECK(same_buffers(golden, fast));
  // JOIN of {6, 7, 5}, {6, 1, 5} and {6, 32, 5} into in_sizes (rows moved side by side).
  const std::vector<std::vector<std::uint32_t>> piece_sizes = {{6, 7, 5}, {6, 1, 5}, {6, 32, 5}};
  std::vector<TensorDesc> piece_descs;
  std::vector<BufferTensorDesc> pieces;
  std::vector<std::vector<float>> piece_data;
  std::vector<ConstBuffer> piece_buffers;
  for (const auto& sizes : piece_sizes) {
    piece_descs.emplace_back(DataType::Float32, sizes);
    piece_data.push_back(test::distinct_buffer<float>(6 * sizes[1] * 5, 100 * piece_data.size()));
  }
  for (std::size_t k = 0; k < piece_sizes.size(); ++k) {
    pieces.push_back(piece_descs[k].desc());
    piece_buffers.push_back({piece_data[k].data(), bytes(piece_data[k])});
  }
  const JoinOperatorDesc join_desc{3, pieces.data(), &descs[0], 1};
  std::vector<float> join_golden(in.size()), join_fast(in.size());
  reference::join(join_desc, piece_buffers, {join_golden.data(), bytes(join_golden)});
  CHECK(test::reaches_thread_pool(
      [&] { join(join_desc, piece_buffers, {join_fast.data(), bytes(join_fast)}); }));
  CHECK(same_buffers(join_golden, join_fast));
}

TEST_CASE("threads: SCATTER from four calling threads at once, each taking scratch memory") {
  // SCATTER's narrowed places live in scratch memory kept between calls (detail::Scratch): calls
  // on several threads at once take and give back the one kept block, or their own.
  const Split split(2);
  std::atomic<int> wrong{0};
  auto caller = [&wrong](unsigned seed) {
    std::mt19937 rng(seed);
    // Many calls of different sizes, so that blocks of different sizes meet in the kept slot.
    for (int i = 0; i < 200; ++i) {
      const std::uint32_t rows = 1 + rng() % 40, n = 1 + rng() % 300;
      const std::vector<float> in = test::distinct_buffer<float>(std::size_t{rows} * n);
      const std::vector<float> up = test::distinct_buffer<float>(std::size_t{rows} * n, 9000);
      std::vector<std::int64_t> ix(std::size_t{rows} * n);
      for (auto& v : ix) v = random_index<std::int64_t>(rng, n, false);
      std::vector<float> golden(in.size()), fast(in.size());
      const TensorView<const float> input(in.data(), {rows, n}), updates(up.data(), {rows, n});
      const TensorView<const std::int64_t> indices(ix.data(), {rows, n});
      reference::scatter<float, std::int64_t>(input, indices, updates,
                                              TensorView<float>(golden.data(), {rows, n}), 1);
      scatter<float, std::int64_t>(input, indices, updates,
                                   TensorView<float>(fast.data(), {rows, n}), 1);
      if (!same_buffers(golden, fast)) ++wrong;
    }
  };
  // And a fifth thread frees the kept block while they run (release_scratch_memory).
  std::atomic<bool> done{false};
  std::thread releaser([&done] {
    while (!done.load()) {
      release_scratch_memory();
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  });
  std::vector<std::thread> callers;
  for (unsigned k = 0; k < 4; ++k) callers.emplace_back(caller, 500u + k);
  for (std::thread& t : callers) t.join();
  done = true;
  releaser.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("threads: REVERSE_SUBSEQUENCES' tiles on 1, 2, 3, 8 threads, each part's buffer its own") {
  // Runs side by side along axis 0 with a length each: long enough an axis for the tiles
  // (kReverseTileMinRows), whose buffers come from scratch memory, one per part.
  static_assert(detail::kReverseTileMinRows <= 40);
  std::mt19937 rng(4040);
  for (const std::uint32_t threads : kThreadCounts) {
    const Split split(threads);
    for (const std::uint32_t columns : {17u, 70u, 300u}) {
      CAPTURE(threads);
      CAPTURE(columns);
      const std::vector<std::uint8_t> in = test::distinct_buffer<std::uint8_t>(40 * columns);
      std::vector<std::uint32_t> lengths(columns);
      for (auto& l : lengths) l = static_cast<std::uint32_t>(rng() % 41);
      std::vector<std::uint8_t> golden(in.size()), fast(in.size());
      const TensorView<const std::uint8_t> input(in.data(), {40, columns});
      const TensorView<const std::uint32_t> length(lengths.data(), {1, columns});
      reference::reverse_subsequences<std::uint8_t, std::uint32_t>(
          input, length, TensorView<std::uint8_t>(golden.data(), {40, columns}), 0);
      reverse_subsequences<std::uint8_t, std::uint32_t>(
          input, length, TensorView<std::uint8_t>(fast.data(), {40, columns}), 0);
      CHECK(same_buffers(golden, fast));
    }
  }
}

TEST_CASE("threads: a small call stays on the calling thread, a large one uses the pool") {
  // JOIN of two float32 pieces {64, 32} along axis 1 (16 KiB): under the threshold.
  std::vector<float> a = test::distinct_buffer<float>(64 * 32);
  std::vector<float> b = test::distinct_buffer<float>(64 * 32, 9000);
  std::vector<float> out(64 * 64);
  const TensorView<const float> pieces[] = {TensorView<const float>(a.data(), {64, 32}),
                                            TensorView<const float>(b.data(), {64, 32})};
  detail::ThreadPool& pool = detail::ThreadPool::instance();
  set_num_threads(8);
  const std::uint64_t before = pool.calls();
  join<float>(pieces, TensorView<float>(out.data(), {64, 64}), 1);
  CHECK(pool.calls() == before);
  // Nor does any other operator's small call (8 KiB each), index passes included.
  const TensorView<const float> piece = pieces[0];
  const TensorView<float> half(out.data(), {64, 32});
  strided_copy<float>(piece, half);
  std::vector<std::uint32_t> lengths(64, 20);
  reverse_subsequences<float, std::uint32_t>(
      piece, TensorView<const std::uint32_t>(lengths.data(), {64, 1}), half, 1);
  std::vector<std::int32_t> index(64 * 32);
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = static_cast<std::int32_t>(i * 7 % 64);
  gather_nd1<float, std::int32_t>(piece, TensorView<const std::int32_t>(index.data(), {64, 1}),
                                  half, 2, 2, 0);
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = static_cast<std::int32_t>(i % 32);
  scatter<float, std::int32_t>(piece, TensorView<const std::int32_t>(index.data(), {64, 32}),
                               pieces[1], half, 1);
  CHECK(pool.calls() == before);
  {
    const Split split(8);  // the same call, split
    join<float>(pieces, TensorView<float>(out.data(), {64, 64}), 1);
  }
  CHECK(pool.calls() == before + 1);
  CHECK(pool.workers() >= 1);
  set_num_threads(1);  // one thread: never the pool, whatever the size
  {
    const Split split(1);
    join<float>(pieces, TensorView<float>(out.data(), {64, 64}), 1);
  }
  CHECK(pool.calls() == before + 1);
  set_num_threads(0);
}

TEST_CASE("threads: a process forked after the workers started computes on its own thread") {
  // JOIN of two uint8 pieces {256, 4096} along axis 1, split: the pool's workers start here, then
  // a child forked from this process makes the same call (its parent's workers do not exist in
  // it) and exits 0 only when its result equals the parent's.
  const std::vector<std::uint8_t> a = test::distinct_buffer<std::uint8_t>(256 * 4096);
  const std::vector<std::uint8_t> b = test::distinct_buffer<std::uint8_t>(256 * 4096, 77);
  const TensorView<const std::uint8_t> pieces[] = {
      TensorView<const std::uint8_t>(a.data(), {256, 4096}),
      TensorView<const std::uint8_t>(b.data(), {256, 4096})};
  const Split split(4);
  std::vector<std::uint8_t> parent(256 * 8192), child(256 * 8192);
  join<std::uint8_t>(pieces, TensorView<std::uint8_t>(parent.data(), {256, 8192}), 1);
  REQUIRE(detail::ThreadPool::instance().workers() >= 1);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    join<std::uint8_t>(pieces, TensorView<std::uint8_t>(child.data(), {256, 8192}), 1);
    ::_exit(child == parent ? 0 : 1);
  }
  int status = -1;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("threads: set_num_threads and get_num_threads; 0 restores the default") {
  const std::uint32_t by_default = get_num_threads();
  CHECK(by_default >= 1);
  CHECK(by_default <= detail::kMaxThreads);
  set_num_threads(3);
  CHECK(get_num_threads() == 3);
  set_num_threads(1);
  CHECK(get_num_threads() == 1);
  set_num_threads(0);
  CHECK(get_num_threads() == by_default);
  DMLREF_CHECK_ERROR(set_num_threads(detail::kMaxThreads + 1), ErrorCode::InvalidOption,
                     "set_num_threads: n is 257 but it must be 0 (the default) to 256");
  CHECK(get_num_threads() == by_default);
}

TEST_CASE("threads: DMLREF_NUM_THREADS is read as a count in [1, 256], anything else ignored") {
  const char* saved = std::getenv("DMLREF_NUM_THREADS");
  const std::string before = saved != nullptr ? saved : "";
  const auto with = [](const char* value) {
    ::setenv("DMLREF_NUM_THREADS", value, 1);
    return detail::environment_threads();
  };
  CHECK(with("1") == 1);
  CHECK(with("3") == 3);
  CHECK(with("0256") == 256);
  CHECK(with("100000000000000000000000") == 256);
  CHECK(with("0") == 0);
  CHECK(with("") == 0);
  CHECK(with("-2") == 0);
  CHECK(with("4 threads") == 0);
  ::unsetenv("DMLREF_NUM_THREADS");
  CHECK(detail::environment_threads() == 0);
  if (saved != nullptr) ::setenv("DMLREF_NUM_THREADS", before.c_str(), 1);
}

TEST_CASE("threads: the split into parts follows size, thread count and nesting") {
  set_num_threads(4);
  // Below the threshold: one part, the calling thread alone.
  CHECK(detail::parallel_parts(detail::kParallelMinBytes - 1, 1000) == 1);
  // At least kParallelPartBytes per part, at most four parts per thread, at most one per item.
  CHECK(detail::parallel_parts(detail::kParallelMinBytes, 1000) ==
        detail::kParallelMinBytes / detail::kParallelPartBytes);
  CHECK(detail::parallel_parts(std::uint64_t{1} << 30, 1000) == 16);
  CHECK(detail::parallel_parts(std::uint64_t{1} << 30, 3) == 3);
  CHECK(detail::parallel_parts(std::uint64_t{1} << 30, 1) == 1);
  set_num_threads(1);
  CHECK(detail::parallel_parts(std::uint64_t{1} << 30, 1000) == 1);
  set_num_threads(0);
  // Inside a part, a call runs on its own thread.
  set_num_threads(4);
  std::vector<std::size_t> inner(8, 0);
  detail::parallel_ranges(8, 8, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k) {
      inner[k] = detail::parallel_parts(std::uint64_t{1} << 30, 1000);
    }
  });
  set_num_threads(0);
  CHECK(std::all_of(inner.begin(), inner.end(), [](std::size_t p) { return p == 1; }));
}

TEST_CASE("threads: a plan splits into consecutive ranges of its outer positions") {
  // {3, 2^20} float32 (12 MiB, rows padded so they do not merge) on 4 threads: 16 parts, each a
  // sixteenth of the 3 * 2^20 elements in the whole's order, not 3 parts (one per row) that leave
  // a thread idle.
  set_num_threads(4);
  const std::uint32_t sizes[] = {3, 1u << 20};
  std::array<std::array<std::int64_t, kMaxRank>, 1> strides{};
  const std::int64_t row_stride = (std::int64_t{1} << 20) + 16;
  strides[0][0] = row_stride;
  strides[0][1] = 1;
  const detail::CopyPlan plan = detail::make_copy_plan(sizes, strides);
  REQUIRE(plan.rank == 2);
  const detail::PlanSplit split = detail::split_dimensions(plan, 16);
  CHECK(split.first == 0);
  CHECK(split.last == 1);
  CHECK(split.positions == 3 * (std::uint64_t{1} << 20));
  // Each block's elements as positions of the whole (row * 2^20 + column): the blocks of every
  // part together are one range of 3 * 2^16 of them.
  std::mutex mutex;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks;  // [first, last] position
  detail::for_each_plan_part(plan, 12u << 20, [&](const detail::CopyPlan& part,
                                                  const detail::PlanBase& base) {
    const auto at = static_cast<std::uint64_t>(base[0]);
    const std::uint64_t row = at / static_cast<std::uint64_t>(row_stride);
    const std::uint64_t first = (row << 20) + at % static_cast<std::uint64_t>(row_stride);
    const std::uint64_t last = first + ((part.sizes[0] - 1) << 20) + part.sizes[1] - 1;
    // A block is whole rows, or one row's consecutive columns.
    CHECK((part.sizes[0] == 1 || (part.sizes[1] == 1u << 20 && first % (1u << 20) == 0)));
    const std::lock_guard<std::mutex> lock(mutex);
    blocks.emplace_back(first, last);
  });
  set_num_threads(0);
  std::sort(blocks.begin(), blocks.end());
  REQUIRE(!blocks.empty());
  CHECK(blocks.front().first == 0);
  CHECK(blocks.back().second == 3 * (std::uint64_t{1} << 20) - 1);
  std::uint64_t cuts = 0;  // where one part ends and the next begins
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    CHECK(blocks[i].first == blocks[i - 1].second + 1);
    if (blocks[i].first % (3u << 16) == 0) ++cuts;
  }
  CHECK(cuts == 15);
}

TEST_CASE("threads: a plan's parts visit every element once; an inner dimension is cut only "
          "where the outer ones lack positions") {
  // Random plans of ranks 1-8 with unique offsets (a permutation's packed strides), split for
  // 2-32 parts with random dimensions allowed: every element in one block exactly once, in
  // blocks that keep each dimension not allowed whole.
  std::mt19937 rng(36);
  const std::uint32_t most[] = {0, 40, 20, 9, 7, 5, 4, 4, 3};
  for (int c = 0; c < 400; ++c) {
    const std::uint32_t rank = 1 + static_cast<std::uint32_t>(rng() % kMaxRank);
    Sizes sizes(rank);
    for (auto& s : sizes) s = 1 + static_cast<std::uint32_t>(rng() % most[rank]);
    sizes[rank - 1] += static_cast<std::uint32_t>(rng() % 8);  // a longer inner dimension
    std::vector<std::uint32_t> order(rank);
    for (std::uint32_t d = 0; d < rank; ++d) order[d] = d;
    std::shuffle(order.begin(), order.end(), rng);
    std::array<std::array<std::int64_t, kMaxRank>, 1> strides{};
    std::int64_t count = 1;  // and the next stride
    for (std::uint32_t k = rank; k-- > 0;) {
      strides[0][order[k]] = count;
      count *= sizes[order[k]];
    }
    const detail::CopyPlan plan = detail::make_copy_plan(sizes, strides);
    const std::uint32_t allowed = rng() % 2 ? ~0u : static_cast<std::uint32_t>(rng() % 512);
    const std::uint32_t threads = 2 + static_cast<std::uint32_t>(rng() % 7);
    CAPTURE(c);
    CAPTURE(plan.rank);
    CAPTURE(allowed);
    const Split split_all(threads);
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(count));
    std::atomic<bool> kept_whole{true};
    std::atomic<int> blocks{0};
    detail::for_each_plan_part(plan, ~std::uint64_t{0} >> 1, [&](const detail::CopyPlan& part,
                                                                 const detail::PlanBase& base) {
      ++blocks;
      for (std::uint32_t d = 0; d < plan.rank; ++d) {
        if ((allowed >> d & 1u) == 0 && part.sizes[d] != plan.sizes[d]) kept_whole = false;
      }
      detail::walk_runs<1>(part, [&](const std::array<std::int64_t, 1>& o) {
        for (std::uint64_t i = 0; i < part.inner_size(); ++i) {
          seen[static_cast<std::size_t>(o[0] + static_cast<std::int64_t>(i) *
                                                   part.inner_stride(0))]++;
        }
      }, base);
    }, allowed);
    CHECK(kept_whole.load());
    CHECK(std::all_of(seen.begin(), seen.end(), [](const std::atomic<int>& n) { return n == 1; }));
    // Split at all wherever an allowed dimension has two positions: a split that never happened
    // would visit every element once too.
    bool splittable = false;
    for (std::uint32_t d = 0; d < plan.rank; ++d) {
      splittable = splittable || ((allowed >> d & 1u) != 0 && plan.sizes[d] >= 2);
    }
    if (splittable) CHECK(blocks.load() >= 2);
  }
  // {6, 6, 6, 6, 6, 6, 6, 12}, a transposed copy's plan, on 2 threads (8 parts): the first two
  // dimensions give 36 positions, so no part cuts the rows of 12 (cut, each of the 8 parts wrote
  // 1 or 2 elements of every row, 4x slower than one thread).
  const std::uint32_t sizes[] = {6, 6, 6, 6, 6, 6, 6, 12};
  std::array<std::array<std::int64_t, kMaxRank>, 1> strides{};
  std::int64_t stride = 1;
  for (std::uint32_t d = 0; d < 8; ++d) {  // reversed: no two dimensions merge
    strides[0][d] = stride;
    stride *= sizes[d];
  }
  const detail::CopyPlan plan = detail::make_copy_plan(sizes, strides);
  REQUIRE(plan.rank == 8);
  const detail::PlanSplit split = detail::split_dimensions(plan, 8);
  CHECK(split.first == 0);
  CHECK(split.last == 1);
  CHECK(split.positions == 36);
  set_num_threads(2);
  std::atomic<int> blocks{0};
  std::atomic<bool> rows_whole{true};
  detail::for_each_plan_part(plan, std::uint64_t{64} << 20, [&](const detail::CopyPlan& part,
                                                                const detail::PlanBase&) {
    ++blocks;
    if (part.sizes[7] != 12 || part.sizes[2] != 6) rows_whole = false;
  });
  set_num_threads(0);
  CHECK(blocks.load() >= 8);
  CHECK(rows_whole.load());
}

TEST_CASE("threads: parallel_ranges covers every item once, in consecutive ranges") {
  for (const std::uint32_t threads : kThreadCounts) {
    set_num_threads(threads);
    for (std::size_t parts : {1u, 2u, 3u, 7u, 32u}) {
      for (std::uint64_t items : {1u, 2u, 5u, 31u, 1000u}) {
        std::vector<int> seen(items, 0);
        detail::parallel_ranges(parts, items, [&](std::uint64_t begin, std::uint64_t end) {
          for (std::uint64_t k = begin; k < end; ++k) ++seen[k];
        });
        CAPTURE(threads);
        CAPTURE(parts);
        CAPTURE(items);
        CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
      }
    }
  }
  set_num_threads(0);
}

}  // namespace test_threads
