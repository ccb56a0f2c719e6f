// dmlref: a CPU golden model of DirectML's data-movement operators. The one header to include.
#pragma once

// A C++17 (or older) build stops here with one message instead of pages of errors about concepts.
// MSVC reports its language version in _MSVC_LANG (__cplusplus only with /Zc:__cplusplus).
#if (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 202002L
#error "dmlref needs C++20: compile with -std=c++20 (g++, clang++) or /std:c++20 (MSVC)"
#else

#include "dmlref/core.hpp"

// Operators (one header each).
#include "dmlref/ops/gather_nd1.hpp"
#include "dmlref/ops/join.hpp"
#include "dmlref/ops/reverse_subsequences.hpp"
#include "dmlref/ops/scatter.hpp"
#include "dmlref/ops/split.hpp"

// Checking a SCATTER result computed elsewhere (ops/scatter.hpp includes it too).
#include "dmlref/scatter_check.hpp"

#endif  // C++20
