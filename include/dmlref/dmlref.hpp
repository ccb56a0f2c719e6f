// dmlref: a CPU golden model of DirectML's data-movement operators. The one header to include.
#pragma once

#include "dmlref/core.hpp"

// Operators (one header each).
#include "dmlref/ops/gather_nd1.hpp"
#include "dmlref/ops/join.hpp"
#include "dmlref/ops/reverse_subsequences.hpp"
#include "dmlref/ops/scatter.hpp"
#include "dmlref/ops/split.hpp"

// Checking a SCATTER result computed elsewhere (ops/scatter.hpp includes it too).
#include "dmlref/scatter_check.hpp"
