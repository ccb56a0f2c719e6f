// dmlref: what a header needs to be callable from CUDA device code as well as from plain C++.
// Kept free of any other include so GPU code and the library both pull it in at no cost.
#pragma once

// Marks a function callable from host and device code under nvcc (and clang's CUDA mode), and
// expands to nothing for a plain C++ compiler.
#if defined(__CUDACC__)
#define DMLREF_HOST_DEVICE __host__ __device__
#else
#define DMLREF_HOST_DEVICE
#endif
