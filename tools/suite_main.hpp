// The entry points of `dmlref-check generate` and `dmlref-check verify` (suite_generate.cpp,
// suite_verify.cpp). argv[0] is the command's name; the result is the process exit status.
#pragma once

namespace dmlref_suite {

int generate_main(int argc, char** argv);
int verify_main(int argc, char** argv);

}  // namespace dmlref_suite
