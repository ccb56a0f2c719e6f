// dmlref's core without the operators: data types and float16, layouts and views, the runtime
// tensor description and its validation, errors, feature levels, the data-movement engine, the
// per-element mapping GPU code can reuse (mapping.hpp; plans from views, mapping_plans.hpp), and
// the tools for checking a device's result (compare, fills, .npy). For code that checks or moves
// tensors without running an operator; dmlref.hpp includes it.
#pragma once

#include "dmlref/compare.hpp"
#include "dmlref/data_type.hpp"
#include "dmlref/engine.hpp"
#include "dmlref/error.hpp"
#include "dmlref/feature_level.hpp"
#include "dmlref/fill.hpp"
#include "dmlref/float16.hpp"
#include "dmlref/indices.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/mapping.hpp"
#include "dmlref/mapping_plans.hpp"
#include "dmlref/npy.hpp"
#include "dmlref/strided_copy.hpp"
#include "dmlref/tensor_desc.hpp"
#include "dmlref/tensor_view.hpp"
#include "dmlref/validation.hpp"
#include "dmlref/version.hpp"
