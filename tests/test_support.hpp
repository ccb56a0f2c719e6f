// Shared helpers for dmlref's tests: the type lists, distinct values per type, bitwise equality,
// and an assertion that a call raises dmlref::Error with a given code and message substring.
//
// A test file that exercises no operator defines DMLREF_TEST_NO_OPERATORS before including this
// header: the operator headers take most of the include time of a test file. The choice is made
// at every inclusion, and the macro is undefined again, so that in a unity build (several test
// files in one unit, tests/CMakeLists.txt) a file that needs the operators still gets them after
// one that did not; the rest of the header is guarded to be read once.
#ifdef DMLREF_TEST_NO_OPERATORS
#include <dmlref/core.hpp>
#undef DMLREF_TEST_NO_OPERATORS
#else
#include <dmlref/dmlref.hpp>
#endif

#ifndef DMLREF_TEST_SUPPORT_HPP
#define DMLREF_TEST_SUPPORT_HPP

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// The eleven element types, for TEST_CASE_TEMPLATE.
#define DMLREF_ALL_TYPES                                                                         \
  double, float, dmlref::float16, std::int64_t, std::int32_t, std::int16_t, std::int8_t,       \
      std::uint64_t, std::uint32_t, std::uint16_t, std::uint8_t
// The four index types (SCATTER/GATHER_ND1 indices); REVERSE_SUBSEQUENCES lengths are the unsigned two.
#define DMLREF_INDEX_TYPES std::int64_t, std::int32_t, std::uint64_t, std::uint32_t

namespace dmlref::test {

// Whether DMLREF_TEST_SPLIT asks this program to run split: tests/test_main.cpp then lowers the
// engine's thresholds so that every call is cut into parts on DMLREF_NUM_THREADS threads.
inline bool runs_split() { return std::getenv("DMLREF_TEST_SPLIT") != nullptr; }

// Whether `call` ran on the engine's threads (a run that never split proves nothing about them).
template <class F>
bool reaches_thread_pool(F&& call) {
  const std::uint64_t before = detail::ThreadPool::instance().calls();
  call();
  return detail::ThreadPool::instance().calls() > before;
}

// Calls f(std::type_identity<I>{}) for each of the four index types.
template <class F>
void for_each_index_type(F&& f) {
  f(std::type_identity<std::int64_t>{});
  f(std::type_identity<std::int32_t>{});
  f(std::type_identity<std::uint64_t>{});
  f(std::type_identity<std::uint32_t>{});
}

// A value of T that is distinct for every i in [0, 2^(8*sizeof(T))) for integers, and for
// i < 2^15 for float16 (built from bit patterns that are not NaN), so a misplaced element never
// passes by accident. Floats get non-integral values to exercise every mantissa bit.
template <class T>
T distinct_value(std::uint64_t i) {
  if constexpr (std::is_same_v<T, float16>) {
    // Positive finite halves 0x0001.. skipping none: 0x0000-0x7BFF are all finite and distinct.
    return float16::from_bits(static_cast<std::uint16_t>((i % 0x7BFFu) + 1u));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<double>(i) + 0.25);
  } else {
    return static_cast<T>(i + 1);
  }
}

// Bitwise equality: the operators move data, so results must match bit for bit (NaN payloads,
// negative zero).
template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// v's bit pattern, zero-extended to 64 bits (what ScatterElementBits and the fill tests hold).
template <class T>
std::uint64_t bits_of(const T& v) {
  if constexpr (sizeof(T) == 1) {
    return std::bit_cast<std::uint8_t>(v);
  } else if constexpr (sizeof(T) == 2) {
    return std::bit_cast<std::uint16_t>(v);
  } else if constexpr (sizeof(T) == 4) {
    return std::bit_cast<std::uint32_t>(v);
  } else {
    return std::bit_cast<std::uint64_t>(v);
  }
}

template <class T>
std::vector<std::uint64_t> bits_of(const std::vector<T>& values) {
  std::vector<std::uint64_t> out;
  for (const T& v : values) out.push_back(bits_of(v));
  return out;
}

// A vector's elements as the runtime layer's buffer.
template <class T>
ConstBuffer cbuf(const std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}
template <class T>
Buffer mbuf(std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}

// A buffer of n elements filled with distinct values starting at `seed_offset`.
template <class T>
std::vector<T> distinct_buffer(std::size_t n, std::uint64_t seed_offset = 0) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = distinct_value<T>(i + seed_offset);
  return v;
}

// "as a value to print": float16 as float, 8-bit integers as int.
template <class T>
auto printable(const T& v) {
  if constexpr (std::is_same_v<T, float16>) {
    return static_cast<float>(v);
  } else if constexpr (sizeof(T) == 1) {
    return static_cast<int>(v);
  } else {
    return v;
  }
}


// The byte every differential test fills destinations with before both paths write, so a path
// that writes an element the other leaves alone (or misses one) shows as a difference.
constexpr unsigned char kSentinel = 0xA5;

template <class T>
std::vector<T> sentinel_buffer(std::size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void*>(v.data()), kSentinel, n * sizeof(T));
  return v;
}

// Whole buffers equal byte for byte (padding between elements included).
template <class T>
bool same_buffers(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         std::memcmp(static_cast<const void*>(a.data()), static_cast<const void*>(b.data()),
                     a.size() * sizeof(T)) == 0;
}

// A random layout of `sizes` and where its element 0 sits in a buffer of `elements` elements.
struct RandomOperand {
  Layout layout;
  std::int64_t origin = 0;
  std::size_t elements = 0;
};

// Packed in a random dimension order (transposed), with random padding after each dimension and
// an innermost stride of 2 (padded), zero strides (broadcast, inputs only), negated strides
// (reversed, typed layer only). Each property independently, so combinations occur too.
inline RandomOperand random_operand(std::mt19937& rng, const std::vector<std::uint32_t>& sizes,
                                    bool is_input, bool allow_reverse) {
  const std::size_t rank = sizes.size();
  std::vector<std::size_t> order(rank);
  std::iota(order.begin(), order.end(), std::size_t{0});
  const bool transposed = rng() % 3 == 0;
  const bool padded = rng() % 3 == 0;
  const bool broadcast = is_input && rng() % 4 == 0;
  const bool reversed = allow_reverse && rng() % 5 == 0;
  if (transposed) std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int64_t> strides(rank);
  std::int64_t stride = padded ? 1 + static_cast<std::int64_t>(rng() % 2) : 1;
  for (std::size_t k = rank; k-- > 0;) {
    const std::size_t d = order[k];
    strides[d] = stride;
    stride = stride * sizes[d] + (padded ? static_cast<std::int64_t>(rng() % 3) : 0);
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (broadcast && rng() % 2 == 0) strides[d] = 0;
    if (reversed && rng() % 3 == 0) strides[d] = -strides[d];
  }
  RandomOperand op;
  op.layout = Layout::strided(sizes, strides);
  const auto range = *op.layout.offset_range();
  op.origin = -range.min;
  op.elements = static_cast<std::size_t>(range.max - range.min + 1);
  return op;
}
}  // namespace dmlref::test

namespace dmlref::test::detail {

// One CHECK_MESSAGE of DMLREF_CHECK_ERROR, reported at the caller's file and line. Kept out of the
// macro so each use expands to a call rather than to doctest's assertion and context machinery
// (a try/catch, a ResultBuilder and a ContextScope type per CHECK_MESSAGE): the test files use
// DMLREF_CHECK_ERROR hundreds of times, many of them inside templates.
inline void check_error_part(const char* file, int line, const char* assertion, bool ok,
                             const std::string& message) {
  DOCTEST_INFO(message);
  doctest::detail::ResultBuilder rb(doctest::assertType::DT_CHECK, file, line, assertion);
  rb.setResult(doctest::detail::ExpressionDecomposer(doctest::assertType::DT_CHECK) << ok);
  if (rb.log()) DOCTEST_BREAK_INTO_DEBUGGER();
  rb.react();
}

// The two checks on a caught dmlref::Error: its code, and a message containing `substring`.
inline void check_caught_error(const char* file, int line, const dmlref::Error& e,
                               dmlref::ErrorCode code, std::string_view substring) {
  check_error_part(file, line, "dmlref_e_.code() == (error_code)", e.code() == code,
                   "code was " + std::string(dmlref::error_code_name(e.code())) + ": " + e.what());
  check_error_part(file, line,
                   "std::string_view(dmlref_e_.what()).find(substring) != std::string_view::npos",
                   std::string_view(e.what()).find(substring) != std::string_view::npos,
                   std::string("message: ") + e.what());
}

// The check that a dmlref::Error was thrown at all.
inline void check_error_thrown(const char* file, int line, bool threw, dmlref::ErrorCode code) {
  check_error_part(file, line, "dmlref_threw_", threw,
                   "expected dmlref::Error " + std::string(dmlref::error_code_name(code)));
}

}  // namespace dmlref::test::detail

// Asserts that `expr` throws dmlref::Error with `code` and a message containing `substring`.
#define DMLREF_CHECK_ERROR(expr, error_code, substring)                                       \
  do {                                                                                         \
    bool dmlref_threw_ = false;                                                                \
    try {                                                                                      \
      (void)(expr);                                                                            \
    } catch (const dmlref::Error& dmlref_e_) {                                                 \
      dmlref_threw_ = true;                                                                    \
      ::dmlref::test::detail::check_caught_error(__FILE__, __LINE__, dmlref_e_, (error_code),  \
                                                 (substring));                                 \
    }                                                                                          \
    ::dmlref::test::detail::check_error_thrown(__FILE__, __LINE__, dmlref_threw_,              \
                                               (error_code));                                  \
  } while (false)

namespace dmlref::test {

// Holds detail::allow_avx2 for a scope and puts back the value it had, however the scope ends, so
// a test can run the AVX2 kernels and then the fallback ones on the same machine.
struct Avx2Switch {
  const bool saved = ::dmlref::detail::allow_avx2;
  ~Avx2Switch() { ::dmlref::detail::allow_avx2 = saved; }
};

}  // namespace dmlref::test

#endif  // DMLREF_TEST_SUPPORT_HPP
