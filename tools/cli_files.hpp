// The file handling dmlref-check's subcommands share: an output written to a temporary file next
// to its target and renamed into place only when the whole call succeeded (the library's
// detail::FileReplacement), and same-file detection by device and inode (so symlinks and hard
// links count), so an output never replaces an input. POSIX only, like the tool itself. Each costs
// a few system calls per file and nothing per pair, so a call with 65,536 outputs stays fast.
#pragma once

#include <dmlref/error.hpp>
#include <dmlref/npy.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
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

// A file a bounded read refuses: not a regular file, larger than allowed, missing or unreadable.
// what() names the file (escaped) and why; raw_message() is the same text with the path as given,
// for a message that is escaped where it is shown (verify's reasons), which would escape it twice.
struct FileRefused : std::runtime_error {
  // `why` follows the quoted path: " is a FIFO, ...", ": cannot open it: ...".
  FileRefused(std::string path, std::string why)
      : std::runtime_error("'" + detail::escape_bytes(path) + "'" + why), path_(std::move(path)),
        why_(std::move(why)) {}
  std::string raw_message() const { return "'" + path_ + "'" + why_; }

 private:
  std::string path_, why_;
};

// What a non-regular file is, for messages.
inline const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Opens a regular file of at most `max_bytes` for reading and returns its descriptor; anything
// else is refused at once, before it is opened where stat can tell (so a FIFO never blocks and a
// device is never read): a FIFO, a device, a directory, a file too large (a sparse 8 GiB file is
// refused by its size, unread), and with `follow_symlinks` false a symlink.
inline int open_regular_file(const std::string& path, std::uint64_t max_bytes, bool follow_symlinks = true) {
  struct stat st {};
  const int found = follow_symlinks ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  if (found != 0) throw FileRefused(path, std::string(": ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw FileRefused(path, std::string(" is ") + file_kind(st.st_mode) + ", not a regular file");
  int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  if (!follow_symlinks) flags |= O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw FileRefused(path, std::string(": cannot open it: ") + std::strerror(errno));
  // Checked again on what was opened: the path may have changed since the stat.
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileRefused(path, std::string(" is ") + file_kind(st.st_mode) + ", not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw FileRefused(path, " holds " + std::to_string(st.st_size) + " bytes, more than the " +
                                std::to_string(max_bytes) + " it may");
  }
  return fd;
}

// Reads at most `max_bytes` of a regular file (open_regular_file's rules). With `prefix`, a
// larger file is not refused: its first `max_bytes` are returned (for logs, read only as far as
// needed). Never allocates more than the file's size or `max_bytes`, whichever is smaller.
inline std::string read_regular_file(const std::string& path, std::uint64_t max_bytes, bool prefix = false,
                                     bool follow_symlinks = true) {
  const std::uint64_t limit = prefix ? ~std::uint64_t{0} >> 1 : max_bytes;
  const int fd = open_regular_file(path, limit, follow_symlinks);
  struct stat st {};
  (void)::fstat(fd, &st);
  const std::uint64_t want = std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size), max_bytes);
  std::string text(static_cast<std::size_t>(want), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw FileRefused(path, std::string(": cannot read it: ") + std::strerror(error));
    }
    if (n == 0) break;  // it shrank
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

// One output file in the making, written whole or not at all: the library's own (npy.hpp), so
// dmlref-check's files and write_npy(path) follow one set of rules.
using AtomicOutput = detail::FileReplacement;

}  // namespace dmlref::cli
