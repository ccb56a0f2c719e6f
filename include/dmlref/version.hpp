// dmlref: the library's version. The CMake package (dmlrefConfigVersion.cmake), dmlref.pc,
// `dmlref-check --version` and the Python module's __version__ all read it from here.
#pragma once

#define DMLREF_VERSION_MAJOR 0
#define DMLREF_VERSION_MINOR 2
#define DMLREF_VERSION_PATCH 0

#define DMLREF_VERSION_STRINGIFY_(x) #x
#define DMLREF_VERSION_STRINGIFY(x) DMLREF_VERSION_STRINGIFY_(x)
#define DMLREF_VERSION_STRING                            \
  DMLREF_VERSION_STRINGIFY(DMLREF_VERSION_MAJOR)         \
  "." DMLREF_VERSION_STRINGIFY(DMLREF_VERSION_MINOR) "." \
      DMLREF_VERSION_STRINGIFY(DMLREF_VERSION_PATCH)

namespace dmlref {

// One number that grows with every release: major * 10000 + minor * 100 + patch.
inline constexpr int kVersion =
    DMLREF_VERSION_MAJOR * 10000 + DMLREF_VERSION_MINOR * 100 + DMLREF_VERSION_PATCH;

}  // namespace dmlref
