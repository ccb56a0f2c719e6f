// dmlref: what every operator header (ops/*.hpp) builds on, included once here so that each of
// them adds only its own story: data types, errors and the feature-level tables; layouts, views
// and the runtime tensor description with the rules every operator checks (T1-T13:
// validation.hpp, tensor_desc.hpp); the index rules (indices.hpp); the engine that executes plans
// by element width (engine.hpp, strided_copy.hpp); and the device-usable mapping that the
// reference loops call (mapping_plans.hpp).
#pragma once

#include "dmlref/data_type.hpp"
#include "dmlref/engine.hpp"
#include "dmlref/error.hpp"
#include "dmlref/feature_level.hpp"
#include "dmlref/indices.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/mapping_plans.hpp"
#include "dmlref/runtime_instances.hpp"
#include "dmlref/strided_copy.hpp"
#include "dmlref/tensor_desc.hpp"
#include "dmlref/tensor_view.hpp"
#include "dmlref/validation.hpp"
