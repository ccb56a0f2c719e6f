// dmlref: a CPU golden model of DirectML's data-movement operators. The one header to include.
#pragma once

#include "dmlref/compare.hpp"
#include "dmlref/data_type.hpp"
#include "dmlref/error.hpp"
#include "dmlref/feature_level.hpp"
#include "dmlref/fill.hpp"
#include "dmlref/float16.hpp"
#include "dmlref/indices.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/npy.hpp"
#include "dmlref/strided_copy.hpp"
#include "dmlref/tensor_desc.hpp"
#include "dmlref/tensor_view.hpp"
#include "dmlref/validation.hpp"

// Operators (one header each).
#include "dmlref/ops/gather_nd1.hpp"
#include "dmlref/ops/join.hpp"
#include "dmlref/ops/reverse_subsequences.hpp"
#include "dmlref/ops/scatter.hpp"
#include "dmlref/ops/split.hpp"
