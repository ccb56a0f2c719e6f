// dmlref: the typed, strided N-d view every operator reads and writes through.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "dmlref/data_type.hpp"
#include "dmlref/error.hpp"
#include "dmlref/layout.hpp"

namespace dmlref {

// A pointer plus a Layout: the element at coordinate c is data()[layout().offset(c)] (T6).
// T may be const. The view owns nothing and checks nothing on construction; operators validate
// the views they are given (T2-T4, T12, T13) before touching any element.
template <class T>
class TensorView {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  static_assert(Element<value_type>, "TensorView element must be one of the eleven data types");

  TensorView() = default;
  TensorView(T* data, const Layout& layout) noexcept : data_(data), layout_(layout) {}
  // Packed row-major view.
  TensorView(T* data, std::initializer_list<std::uint32_t> sizes)
      : data_(data), layout_(Layout::packed(sizes)) {}

  // A view of const T from a view of T.
  template <class U>
    requires(std::is_const_v<T> && std::is_same_v<std::remove_const_t<T>, U>)
  TensorView(const TensorView<U>& other) noexcept  // NOLINT: implicit like T* -> const T*
      : data_(other.data()), layout_(other.layout()) {}

  T* data() const noexcept { return data_; }
  const Layout& layout() const noexcept { return layout_; }
  std::uint32_t rank() const noexcept { return layout_.rank; }
  std::uint32_t size(std::uint32_t d) const noexcept { return layout_.sizes[d]; }
  std::int64_t stride(std::uint32_t d) const noexcept { return layout_.strides[d]; }
  std::uint64_t element_count() const noexcept { return layout_.element_count(); }
  static constexpr DataType data_type() noexcept { return data_type_of<value_type>; }

  // Unchecked access for loops whose coordinates come from the view's own sizes.
  T& operator[](const Coord& c) const noexcept { return data_[layout_.offset(c)]; }

  // Checked access: the coordinate's length must equal the rank and every index be in range.
  T& at(std::initializer_list<std::uint32_t> coordinate) const {
    if (coordinate.size() != layout_.rank) {
      detail::fail(ErrorCode::T6, "TensorView::at: ", coordinate.size(),
                   " coordinates given but the view has ", layout_.rank, " dimensions");
    }
    Coord c{};
    std::uint32_t d = 0;
    for (std::uint32_t v : coordinate) {
      if (v >= layout_.sizes[d]) {
        detail::fail(ErrorCode::T6, "TensorView::at: coordinate[", d, "] is ", v,
                     " but Sizes[", d, "] is ", layout_.sizes[d], "; it must be smaller");
      }
      c[d++] = v;
    }
    return (*this)[c];
  }

 private:
  T* data_ = nullptr;
  Layout layout_{};
};

template <class T>
TensorView(T*, const Layout&) -> TensorView<T>;

}  // namespace dmlref
