// dmlref: checking a SCATTER result computed elsewhere (a GPU), the harness's side of SC8's
// duplicates: where two or more updates target one output element the page guarantees no winner,
// so such an element accepts any one of them and every other element only the reference's value,
// bit for bit. Also lists those colliding elements. A tool like compare.hpp, not the operator
// (ops/scatter.hpp, which includes this header, so either one gives the whole of SCATTER).
#pragma once

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dmlref/compare.hpp"
#include "dmlref/data_type.hpp"
#include "dmlref/indices.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/ops/scatter.hpp"
#include "dmlref/runtime_instances.hpp"
#include "dmlref/tensor_desc.hpp"
#include "dmlref/tensor_view.hpp"

namespace dmlref {

// An element of a runtime-typed tensor: its data type and its bit pattern (the same-size unsigned
// integer, widened), so runtime results keep every bit without a template parameter.
struct ScatterElementBits {
  DataType data_type = DataType::Unknown;
  std::uint64_t bits = 0;
  friend bool operator==(const ScatterElementBits&, const ScatterElementBits&) = default;
};

// The first few mismatches a check keeps by default.
inline constexpr std::size_t kScatterCheckMaxReported = 10;

// The candidates a reported mismatch at a colliding element lists at most (it counts them all):
// broadcast indices can send 2^32 - 1 updates to one element, and a report holding each one cost
// memory by the updates' logical count. find_scatter_collisions lists them all.
inline constexpr std::size_t kScatterCheckMaxCandidates = 16;

namespace detail {

// The inverse of compare.hpp's element_bits.
template <class T>
T scatter_element_from_bits(std::uint64_t bits) noexcept {
  return std::bit_cast<T>(static_cast<bits_of_t<T>>(bits));
}

// Results are bitwise (tensors.md: data moves bit for bit), so a check never uses ==, which
// would call -0 == +0 and NaN != NaN for float and double.
template <class T>
bool scatter_same_bits(const T& a, const T& b) noexcept {
  return element_bits(a) == element_bits(b);
}

// Values print as compare.hpp's reports print them ("7 (0x40e00000)", "-100", "nan (0x7e01)").
template <Element T>
std::string scatter_value_string(const T& v) {
  return format_element(v);
}
// A template only so that its eleven instantiations of format_element compile where a runtime
// result is printed, not in every translation unit that includes dmlref.hpp.
template <std::same_as<ScatterElementBits> Bits>
std::string scatter_value_string(const Bits& v) {
  if (!is_valid(v.data_type)) return hex_bits(v.bits);
  return visit(v.data_type, [&](auto t) {
    using T = typename decltype(t)::type;
    return format_element(scatter_element_from_bits<T>(v.bits));
  });
}

}  // namespace detail

// --- result types ---------------------------------------------------------------------------
// V is the element type on the typed layer and ScatterElementBits on the runtime layer.

// One update that targets a colliding output element: where it sits in IndicesTensor (and
// UpdatesTensor, which has the same sizes, SC6) and its value.
template <class V>
struct ScatterCandidate {
  Coord indices_coordinate{};
  V value{};
};

// An output element that two or more updates target, with every candidate in row-major order of
// the indices (so under DuplicatePolicy::LastWins the last candidate is the reference's value).
template <class V>
struct ScatterCollision {
  std::uint32_t rank = 0;
  Coord output_coordinate{};
  std::vector<ScatterCandidate<V>> candidates;

  // "OutputTensor[3]: IndicesTensor[0] -> 5, IndicesTensor[2] -> 7"
  std::string to_string() const {
    std::string s = "OutputTensor" + detail::coordinate_string(output_coordinate, rank) + ":";
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      s += i == 0 ? " " : ", ";
      s += "IndicesTensor" + detail::coordinate_string(candidates[i].indices_coordinate, rank) +
           " -> " + detail::scatter_value_string(candidates[i].value);
    }
    return s;
  }
};

// One output element whose actual value is not allowed.
template <class V>
struct ScatterMismatch {
  Coord output_coordinate{};
  V actual{};
  V expected{};  // the only correct value; meaningful when `candidates` is empty
  // A colliding element: any one of its candidate_count candidates is correct; the first
  // kScatterCheckMaxCandidates of them, in row-major order of the indices, are listed.
  std::vector<ScatterCandidate<V>> candidates;
  std::uint64_t candidate_count = 0;
};

// What check_scatter_result found. Convertible to bool (true: the result is correct).
template <class V>
struct ScatterCheckResult {
  std::uint32_t rank = 0;
  std::uint64_t element_count = 0;            // output elements compared
  std::uint64_t colliding_element_count = 0;  // of those, elements with several candidates
  std::uint64_t mismatch_count = 0;
  std::vector<ScatterMismatch<V>> mismatches;  // the first few, in row-major order

  bool ok() const noexcept { return mismatch_count == 0; }
  explicit operator bool() const noexcept { return ok(); }

  std::string to_string() const {
    std::ostringstream os;
    os << "SCATTER result check: ";
    if (ok()) {
      os << "all " << element_count << " elements match";
    } else {
      os << mismatch_count << " of " << element_count << " elements mismatch";
    }
    if (colliding_element_count == 1) {
      os << " (1 colliding output element accepts any one of its updates)";
    } else if (colliding_element_count > 1) {
      os << " (" << colliding_element_count
         << " colliding output elements accept any one of their updates)";
    }
    for (const ScatterMismatch<V>& m : mismatches) {
      os << "\n  OutputTensor" << detail::coordinate_string(m.output_coordinate, rank) << ": ";
      if (m.candidates.empty()) {
        os << "expected " << detail::scatter_value_string(m.expected);
      } else {
        os << "expected one of the colliding updates {";
        for (std::size_t i = 0; i < m.candidates.size(); ++i) {
          if (i != 0) os << ", ";
          os << "IndicesTensor"
             << detail::coordinate_string(m.candidates[i].indices_coordinate, rank) << " -> "
             << detail::scatter_value_string(m.candidates[i].value);
        }
        if (m.candidate_count > m.candidates.size()) {
          os << ", and " << (m.candidate_count - m.candidates.size()) << " more";
        }
        os << "}";
      }
      os << ", actual " << detail::scatter_value_string(m.actual);
    }
    if (mismatch_count > mismatches.size()) {
      os << "\n  ... and " << (mismatch_count - mismatches.size()) << " more";
    }
    return os.str();
  }
};

namespace detail {

// IndicesTensor read through its runtime index type, one switch per index. The check and the
// collision list are tools, not the operator's fast path, so they compile once per element type
// (or width, at run time: 4 bodies) instead of once per width and index type (16): a TU calling
// the runtime check_scatter_result took 8.6 s of g++ -O2 before, 5.3-6.0 s after.
struct ScatterIndices {
  const void* data = nullptr;
  DataType type = DataType::Unknown;  // an index type (SC3 was checked)
  Layout layout;

  template <IndexElement I>
  static ScatterIndices of(const TensorView<const I>& indices) {
    return {indices.data(), data_type_of<I>, indices.layout()};
  }

  // The index along Axis (of size n) of the output element that the update at u targets.
  std::uint32_t target(const Coord& u, std::uint32_t n) const {
    return visit_index(type, ErrorCode::SC3, [&](auto index_type) {
      using I = typename decltype(index_type)::type;
      return scatter_target_index(static_cast<const I*>(data)[layout.offset(u)], n);
    });
  }

  // Calls f with the indices as a TensorView of their own index type.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return visit_index(type, ErrorCode::SC3, [&](auto index_type) -> decltype(auto) {
      using I = typename decltype(index_type)::type;
      return f(TensorView<const I>(static_cast<const I*>(data), layout));
    });
  }
};

// Calls f(u, c, position) for every indices coordinate u in row-major order, with c the output
// coordinate it targets and `position` c's row-major rank in the output (sizes == the input's).
template <class F>
void for_each_scatter_target(const ScatterIndices& indices, std::uint32_t axis,
                             const Layout& input, F&& f) {
  const Layout packed = Layout::packed(input.size_span());
  const std::uint32_t n = input.sizes[axis];
  for_each_coordinate(indices.layout, [&](const Coord& u) {
    Coord c = u;
    c[axis] = indices.target(u, n);
    f(u, c, static_cast<std::uint64_t>(packed.offset(c)));
  });
}

// Every output element two or more updates target, in row-major order of the output, each with
// its updates' indices coordinates in row-major order of the indices.
struct ScatterCollisionSite {
  std::uint64_t position = 0;  // row-major rank of the output element
  Coord output_coordinate{};
  std::vector<Coord> sources;
};

// One bit per output element: whether two or more updates target it; empty when none is. Two bits
// per output element find them, so a check that keeps no update costs memory by the output.
template <class Deferred = void>
std::vector<bool> scatter_repeated_targets(const ScatterIndices& indices, std::uint32_t axis,
                                           const Layout& input) {
  const std::uint64_t count = input.element_count();
  std::vector<bool> taken(count, false), repeated(count, false);
  bool any = false;
  for_each_scatter_target(indices, axis, input, [&](const Coord&, const Coord&, std::uint64_t p) {
    if (taken[p]) {
      repeated[p] = true;
      any = true;
    }
    taken[p] = true;
  });
  if (!any) repeated.clear();
  return repeated;
}

// A template only so that it compiles where it is called.
template <class Deferred = void>
std::vector<ScatterCollisionSite> scatter_collision_sites(const ScatterIndices& indices,
                                                          std::uint32_t axis,
                                                          const Layout& input) {
  // Only the repeated targets' updates are kept.
  const std::vector<bool> repeated = scatter_repeated_targets(indices, axis, input);
  if (repeated.empty()) return {};
  struct Hit {
    std::uint64_t position;
    Coord output;
    Coord source;
  };
  std::vector<Hit> hits;
  for_each_scatter_target(indices, axis, input, [&](const Coord& u, const Coord& c,
                                                    std::uint64_t p) {
    if (repeated[p]) hits.push_back({p, c, u});
  });
  // Stable: within one target the hits stay in row-major order of the indices.
  std::stable_sort(hits.begin(), hits.end(),
                   [](const Hit& a, const Hit& b) { return a.position < b.position; });
  std::vector<ScatterCollisionSite> sites;
  for (const Hit& h : hits) {
    if (sites.empty() || sites.back().position != h.position) {
      sites.push_back({h.position, h.output, {}});
    }
    sites.back().sources.push_back(h.source);
  }
  return sites;
}

template <class T>
std::vector<ScatterCollision<T>> scatter_collisions_validated(const ScatterIndices& indices,
                                                              const TensorView<const T>& updates,
                                                              std::uint32_t axis,
                                                              const Layout& input) {
  std::vector<ScatterCollision<T>> out;
  for (const ScatterCollisionSite& site : scatter_collision_sites(indices, axis, input)) {
    ScatterCollision<T> collision{input.rank, site.output_coordinate, {}};
    for (const Coord& u : site.sources) collision.candidates.push_back({u, updates[u]});
    out.push_back(std::move(collision));
  }
  return out;
}

template <class T>
ScatterCheckResult<T> check_scatter_result_validated(const TensorView<const T>& input,
                                                     const ScatterIndices& indices,
                                                     const TensorView<const T>& updates,
                                                     const TensorView<const T>& actual,
                                                     std::uint32_t axis, std::size_t max_reported) {
  const Layout& in = input.layout();
  std::vector<T> expected_storage(in.element_count());
  const TensorView<T> expected(expected_storage.data(), Layout::packed(in.size_span()));
  // The reference's own loop, per index type: the one part of the check compiled 16 times at run
  // time, and the smallest.
  indices.visit([&](const auto& typed_indices) {
    scatter_reference(input, typed_indices, updates, expected, axis);
  });
  // No update is kept: a collision's actual value is matched against its updates in one more walk
  // of the indices, and only the sites reported as wrong collect their candidates (a last walk,
  // up to kScatterCheckMaxCandidates each), so memory follows the output and the report, not the
  // updates (which may be broadcast).
  const std::vector<bool> repeated = scatter_repeated_targets(indices, axis, in);
  std::vector<bool> matched(repeated.size(), false);
  if (!repeated.empty()) {
    for_each_scatter_target(indices, axis, in, [&](const Coord& u, const Coord& c,
                                                   std::uint64_t p) {
      if (repeated[p] && !matched[p] && scatter_same_bits(actual[c], updates[u])) matched[p] = true;
    });
  }

  ScatterCheckResult<T> result;
  result.rank = in.rank;
  result.element_count = in.element_count();
  // The reported colliding elements: their positions (increasing: the walk is row-major) and
  // their places in result.mismatches.
  std::vector<std::uint64_t> reported_positions, reported_places;
  std::uint64_t position = 0;
  for_each_coordinate(actual.layout(), [&](const Coord& c) {
    const T value = actual[c];
    const bool colliding = !repeated.empty() && repeated[position];
    result.colliding_element_count += colliding ? 1 : 0;
    if (colliding ? !matched[position] : !scatter_same_bits(value, expected[c])) {
      if (result.mismatch_count++ < max_reported) {
        if (colliding) {
          reported_positions.push_back(position);
          reported_places.push_back(result.mismatches.size());
        }
        result.mismatches.push_back({c, value, expected[c], {}});
      }
    }
    ++position;
  });
  if (!reported_positions.empty()) {
    for_each_scatter_target(indices, axis, in, [&](const Coord& u, const Coord&, std::uint64_t p) {
      if (!repeated[p] || matched[p]) return;
      const auto site = std::lower_bound(reported_positions.begin(), reported_positions.end(), p);
      if (site != reported_positions.end() && *site == p) {
        const auto k = static_cast<std::size_t>(site - reported_positions.begin());
        ScatterMismatch<T>& m = result.mismatches[reported_places[k]];
        if (m.candidates.size() < kScatterCheckMaxCandidates) {
          m.candidates.push_back({u, updates[u]});
        }
        ++m.candidate_count;
      }
    });
  }
  return result;
}

}  // namespace detail

// --- typed layer ----------------------------------------------------------------------------

// Every output element that two or more updates target, in row-major order of the output, each
// with its candidate updates in row-major order of the indices. Validates like the operator except
// that there is no output and duplicates are never an error (options.duplicates is ignored).
template <class T, IndexElement I>
std::vector<ScatterCollision<T>> find_scatter_collisions(
    TensorView<const T> input, TensorView<const I> indices,
    std::type_identity_t<TensorView<const T>> updates, std::uint32_t axis,
    const ScatterOptions& options = {}) {
  detail::validate_scatter_views<T, I>(input, indices, updates, nullptr,
                                       detail::ScatterUse::Collisions, axis, options);
  return detail::scatter_collisions_validated(detail::ScatterIndices::of(indices), updates, axis,
                                              input.layout());
}

// Checks a result computed elsewhere (a GPU) against the reference, bit for bit: at an output
// element that several updates target any one of them is accepted (the page guarantees no
// winner); everywhere else only the exact value is. Validates the arguments like the operator
// (actual_output in the OutputTensor role, without T13: nothing is written), so with
// DuplicatePolicy::Reject any duplicate is an error instead.
template <class T, IndexElement I>
ScatterCheckResult<T> check_scatter_result(TensorView<const T> input, TensorView<const I> indices,
                                           std::type_identity_t<TensorView<const T>> updates,
                                           std::type_identity_t<TensorView<const T>> actual_output,
                                           std::uint32_t axis, const ScatterOptions& options = {},
                                           std::size_t max_reported = kScatterCheckMaxReported) {
  detail::validate_scatter_views<T, I>(input, indices, updates, &actual_output,
                                       detail::ScatterUse::Check, axis, options);
  return detail::check_scatter_result_validated(input, detail::ScatterIndices::of(indices),
                                                updates, actual_output, axis, max_reported);
}

// --- runtime layer --------------------------------------------------------------------------

namespace detail {

// Candidates read at width W, as values of `data_type`.
template <class W>
std::vector<ScatterCandidate<ScatterElementBits>> scatter_bits_of(
    DataType data_type, const std::vector<ScatterCandidate<W>>& candidates) {
  std::vector<ScatterCandidate<ScatterElementBits>> out;
  out.reserve(candidates.size());
  for (const ScatterCandidate<W>& c : candidates) {
    out.push_back({c.indices_coordinate, {data_type, c.value}});
  }
  return out;
}

inline ScatterIndices scatter_indices_of(const ScatterBound& b) {
  return {b.indices.data, b.indices.tensor.data_type, b.indices.tensor.layout};
}

}  // namespace detail

// Runtime find_scatter_collisions: no output buffer; OutputTensor's description is still checked.
// A template only so that its body compiles in the translation unit that calls it.
template <class Deferred = void>
std::vector<ScatterCollision<ScatterElementBits>> find_scatter_collisions(
    const ScatterOperatorDesc& desc, ConstBuffer input, ConstBuffer indices, ConstBuffer updates,
    const ScatterOptions& options = {}) {
  const detail::ScatterBound b = detail::bind_scatter(desc, input, indices, updates, nullptr,
                                                      detail::ScatterUse::Collisions, options);
  // By width: a collision list compares and copies bits, never reads a value; the data type
  // travels in each ScatterElementBits, for printing.
  const DataType data_type = b.input.tensor.data_type;
  return visit_width(data_type, [&](auto width) {
    using W = typename decltype(width)::type;
    std::vector<ScatterCollision<ScatterElementBits>> out;
    for (const ScatterCollision<W>& c : detail::scatter_collisions_validated(
             detail::scatter_indices_of(b), view_of<const W>(b.updates), desc.Axis,
             b.input.tensor.layout)) {
      out.push_back(
          {c.rank, c.output_coordinate, detail::scatter_bits_of(data_type, c.candidates)});
    }
    return out;
  });
}

// Runtime check_scatter_result: `actual_output` is the result read back, described by
// desc.OutputTensor. A template only so that its body compiles in the translation unit that
// calls it.
template <class Deferred = void>
ScatterCheckResult<ScatterElementBits> check_scatter_result(
    const ScatterOperatorDesc& desc, ConstBuffer input, ConstBuffer indices, ConstBuffer updates,
    ConstBuffer actual_output, const ScatterOptions& options = {},
    std::size_t max_reported = kScatterCheckMaxReported) {
  const detail::ScatterBound b = detail::bind_scatter(
      desc, input, indices, updates, &actual_output, detail::ScatterUse::Check, options);
  // By width, as find_scatter_collisions: the check compares bits (4 bodies, where data types
  // would make 11).
  const DataType data_type = b.input.tensor.data_type;
  return visit_width(data_type, [&](auto width) {
    using W = typename decltype(width)::type;
    const ScatterCheckResult<W> r = detail::check_scatter_result_validated(
        view_of<const W>(b.input), detail::scatter_indices_of(b),
        view_of<const W>(b.updates), view_of<const W>(b.output), desc.Axis, max_reported);
    ScatterCheckResult<ScatterElementBits> out{r.rank, r.element_count, r.colliding_element_count,
                                               r.mismatch_count, {}};
    for (const ScatterMismatch<W>& m : r.mismatches) {
      out.mismatches.push_back({m.output_coordinate,
                                {data_type, m.actual},
                                {data_type, m.expected},
                                detail::scatter_bits_of(data_type, m.candidates),
                                m.candidate_count});
    }
    return out;
  });
}

// Compiled once per program with DMLREF_EXTERN_RUNTIME (runtime_instances.hpp).
DMLREF_RUNTIME_INSTANCE(
    std::vector<ScatterCollision<ScatterElementBits>> find_scatter_collisions<void>(
        const ScatterOperatorDesc&, ConstBuffer, ConstBuffer, ConstBuffer, const ScatterOptions&));
DMLREF_RUNTIME_INSTANCE(ScatterCheckResult<ScatterElementBits> check_scatter_result<void>(
    const ScatterOperatorDesc&, ConstBuffer, ConstBuffer, ConstBuffer, ConstBuffer,
    const ScatterOptions&, std::size_t));

}  // namespace dmlref
