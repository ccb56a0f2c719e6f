// What the suite commands (generate, verify) share beyond suite.hpp, and the operator commands take
// from it too: usage errors (exit 2) and their command lines.
#pragma once

#include "suite.hpp"
#include "suite_main.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <string_view>

namespace dmlref_suite {

// A command-line mistake: exit 2 with the message.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses a suite command's flags: true when they asked for --help (printed here); a mistake is a
// UsageError that names the command.
inline bool parse_command_line(CLI::App& app, int argc, char** argv, const std::string& command) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return true;
  } catch (const CLI::ParseError& e) {
    throw UsageError(command + ": " + e.what() + " (dmlref-check " + command + " --help lists the flags)");
  }
  return false;
}

inline dmlref::FeatureLevel parse_level(const std::string& text) {
  if (const auto level = dmlref::find_feature_level(text)) return *level;
  throw UsageError("--feature-level " + text + " is not a DirectML feature level (e.g. 4_1, 5_0)");
}

}  // namespace dmlref_suite
