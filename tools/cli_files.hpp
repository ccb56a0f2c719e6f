// The file handling dmlref-check's subcommands share: an output written to a temporary file next
// to its target and renamed into place only when the whole call succeeded (the library's
// detail::FileReplacement), and same-file detection by device and inode (so symlinks and hard
// links count), so an output never replaces an input. POSIX only, like the tool itself. Each costs
// a few system calls per file and nothing per pair, so a call with 65,536 outputs stays fast.
#pragma once

#include <dmlref/error.hpp>
#include <dmlref/npy.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace dmlref::cli {

// The device and inode a path names (following symlinks), or nothing when it does not exist.
struct FileId {
  dev_t device = 0;
  ino_t inode = 0;
  friend auto operator<=>(const FileId&, const FileId&) = default;
};

inline std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

// Finds paths that name one file: existing files by device and inode, files not yet created by
// their directory's canonical path plus their name (resolved once per directory).
class SameFileIndex {
 public:
  struct Entry {
    std::string label;  // e.g. "--out 'g.npy'"
    bool is_output = false;
  };

  // The first path recorded that names the same file as `path` (recording `path` when it is the
  // first); nothing when it is new.
  std::optional<Entry> add(const std::string& path, Entry entry) {
    std::string key;
    if (const auto id = file_id(path)) {
      key = "id:" + std::to_string(id->device) + ":" + std::to_string(id->inode);
      any_existing_ = true;
    } else {
      key = "path:" + new_file_key(path);
    }
    const auto [it, inserted] = seen_.emplace(std::move(key), std::move(entry));
    if (inserted) return std::nullopt;
    return it->second;
  }

  // Whether any path recorded so far exists (if none does, no existing file can match them).
  bool any_existing() const { return any_existing_; }

 private:
  std::string new_file_key(const std::string& path) {
    const std::filesystem::path p(path);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
    auto it = canonical_dirs_.find(dir);
    if (it == canonical_dirs_.end()) {
      std::error_code ec;
      auto canonical = std::filesystem::weakly_canonical(dir, ec);
      it = canonical_dirs_.emplace(dir, ec ? dir : canonical.string()).first;
    }
    return it->second + "/" + p.filename().string();
  }

  std::map<std::string, Entry> seen_;                  // key -> the first path's entry
  bool any_existing_ = false;
  std::map<std::string, std::string> canonical_dirs_;  // as given -> canonical
};

// One output file in the making, written whole or not at all: the library's own (npy.hpp), so
// dmlref-check's files and write_npy(path) follow one set of rules.
using AtomicOutput = detail::FileReplacement;

}  // namespace dmlref::cli
