// What generate and verify share beyond suite.hpp: usage errors (exit 2) and feature-level names.
#pragma once

#include "suite.hpp"
#include "suite_main.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

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
  for (std::uint32_t v : {0x1000u, 0x2000u, 0x2100u, 0x3000u, 0x3100u, 0x4000u, 0x4100u, 0x5000u,
                          0x5100u, 0x5200u, 0x6000u, 0x6100u, 0x6200u, 0x6300u, 0x6400u}) {
    const auto level = static_cast<dmlref::FeatureLevel>(v);
    const std::string name = dmlref::feature_level_name(level);  // DML_FEATURE_LEVEL_4_1
    const std::string short_name = name.substr(18);              // 4_1
    std::string dotted = short_name;
    dotted[1] = '.';
    if (text == name || text == short_name || text == dotted) return level;
  }
  throw UsageError("--feature-level " + text + " is not a DirectML feature level (e.g. 4_1, 5_0)");
}

// "4_1"
inline std::string level_short_name(dmlref::FeatureLevel level) {
  return dmlref::feature_level_name(level).substr(18);
}

}  // namespace dmlref_suite
