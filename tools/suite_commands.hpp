// What the suite commands (generate, verify) share beyond suite.hpp, and the operator commands take
// from it too: usage errors (exit 2) and feature-level names.
#pragma once

#include "suite.hpp"
#include "suite_main.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <optional>
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

// Every DirectML feature level, oldest first.
inline constexpr dmlref::FeatureLevel kFeatureLevels[] = {
    dmlref::FeatureLevel::k1_0, dmlref::FeatureLevel::k2_0, dmlref::FeatureLevel::k2_1,
    dmlref::FeatureLevel::k3_0, dmlref::FeatureLevel::k3_1, dmlref::FeatureLevel::k4_0,
    dmlref::FeatureLevel::k4_1, dmlref::FeatureLevel::k5_0, dmlref::FeatureLevel::k5_1,
    dmlref::FeatureLevel::k5_2, dmlref::FeatureLevel::k6_0, dmlref::FeatureLevel::k6_1,
    dmlref::FeatureLevel::k6_2, dmlref::FeatureLevel::k6_3, dmlref::FeatureLevel::k6_4};
inline constexpr std::string_view kFeatureLevelPrefix = "DML_FEATURE_LEVEL_";

// 4_1, 4.1 or DML_FEATURE_LEVEL_4_1 (every command's --feature-level), or nothing.
inline std::optional<dmlref::FeatureLevel> find_feature_level(const std::string& text) {
  // Built by appending: GCC 12's -Wrestrict misfires on "literal" + std::string&& at -O2.
  std::string t(text.rfind(kFeatureLevelPrefix, 0) == 0 ? "" : kFeatureLevelPrefix);
  t += text;
  std::replace(t.begin(), t.end(), '.', '_');
  for (dmlref::FeatureLevel level : kFeatureLevels) {
    if (dmlref::feature_level_name(level) == t) return level;
  }
  return std::nullopt;
}

inline dmlref::FeatureLevel parse_level(const std::string& text) {
  if (const auto level = find_feature_level(text)) return *level;
  throw UsageError("--feature-level " + text + " is not a DirectML feature level (e.g. 4_1, 5_0)");
}

// "4_1"
inline std::string level_short_name(dmlref::FeatureLevel level) {
  return dmlref::feature_level_name(level).substr(kFeatureLevelPrefix.size());
}

}  // namespace dmlref_suite
