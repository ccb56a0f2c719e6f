// dmlref: the runtime layer compiled once per program, not once per translation unit that calls
// it.
//
// The runtime entry points (each operator's call on a DirectML description and its buffers, its
// reference twin, compare, check_scatter_result and find_scatter_collisions) are templates only so
// that their bodies compile where they are called, never where the header is merely included. A
// program that calls them from several translation units compiles the engine in each of them. Two
// macros make that once:
//   DMLREF_EXTERN_RUNTIME       defined for every translation unit: each header declares its entry
//                               points' one instance `extern template`, so a calling unit compiles
//                               the call and not the body;
//   DMLREF_INSTANTIATE_RUNTIME  defined in exactly one translation unit, which then includes
//                               <dmlref/dmlref.hpp>: that unit compiles every instance.
// With CMake, link dmlref::runtime instead of dmlref::dmlref: it does both (README.md, "Compiling
// the runtime layer once"). Results do not change; only where the code is compiled moves.
#pragma once

// Each header that defines runtime entry points follows them with one line per entry point,
// DMLREF_RUNTIME_INSTANCE(<its signature>): the definition in the instantiating unit (which may
// see DMLREF_EXTERN_RUNTIME too, as dmlref::runtime's does: the definition is all it needs), the
// extern declaration in the calling units, nothing otherwise.
#if defined(DMLREF_INSTANTIATE_RUNTIME)
#define DMLREF_RUNTIME_INSTANCE(...) template __VA_ARGS__
#elif defined(DMLREF_EXTERN_RUNTIME)
#define DMLREF_RUNTIME_INSTANCE(...) extern template __VA_ARGS__
#else
#define DMLREF_RUNTIME_INSTANCE(...) static_assert(true)
#endif
