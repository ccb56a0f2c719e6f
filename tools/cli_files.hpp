// The file handling dmlref-check's subcommands share: an output written to a temporary file next
// to its target and renamed into place only when the whole call succeeded, and same-file detection
// by device and inode (so symlinks and hard links count), so an output never replaces an input.
// POSIX only, like the tool itself. Each costs a few system calls per file and nothing per pair,
// so a call with 65,536 outputs stays fast.
#pragma once

#include <dmlref/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <streambuf>
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

// An ostream over a file descriptor, writing straight through (the .npy writer hands it the header
// and then large chunks of data, so a buffer would only add a copy).
class FdStreamBuf : public std::streambuf {
 public:
  void set_fd(int fd) { fd_ = fd; }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::streamsize done = 0;
    while (done < n) {
      const ::ssize_t w = ::write(fd_, s + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      done += w;
    }
    return done;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }

 private:
  int fd_ = -1;
};

// One output file in the making: the bytes go to a temporary file in the target's directory (so
// the final rename cannot cross file systems) and reach the target only on commit(). Destroyed
// uncommitted (an error, a failed check of another file), it removes the temporary file and the
// target is untouched.
class AtomicOutput {
 public:
  explicit AtomicOutput(const std::string& target) : target_(target), stream_(&buf_) {
    struct stat st {};
    const bool exists = ::lstat(target_.c_str(), &st) == 0;
    if (exists && S_ISLNK(st.st_mode)) {
      // Writing through a symlink replaces the file it points to, as a plain open would.
      std::error_code ec;
      const auto resolved = std::filesystem::weakly_canonical(target_, ec);
      if (!ec) target_ = resolved.string();
    }
    const bool target_exists = ::stat(target_.c_str(), &st) == 0;
    if (target_exists && S_ISDIR(st.st_mode)) {
      detail::fail(ErrorCode::Io, "cannot write '", target, "': it is a directory");
    }
    const std::filesystem::path path(target_);
    const std::string stem =
        ((path.has_parent_path() ? path.parent_path() : std::filesystem::path(".")) /
         ("." + path.filename().string() + ".dmlref-" + std::to_string(process_id()) + "-"))
            .string();
    // 0666 less the umask, as a plain create gets; a replaced file keeps its own permissions.
    for (unsigned attempt = 0; fd_ < 0; ++attempt) {
      temp_ = stem + std::to_string(attempt);
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && (errno != EEXIST || attempt > 1000)) {
        const int error = errno;
        temp_.clear();
        detail::fail(ErrorCode::Io, "cannot create a temporary file next to '", target, "': ",
                     std::strerror(error));
      }
    }
    if (target_exists && S_ISREG(st.st_mode)) (void)::fchmod(fd_, st.st_mode & 07777);
    buf_.set_fd(fd_);
  }
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;
  ~AtomicOutput() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty()) ::unlink(temp_.c_str());
  }

  std::ostream& stream() { return stream_; }
  const std::string& target() const { return target_; }

  // Closes the temporary file; a write error (a full disk) is ErrorCode::Io.
  void finish() {
    const bool written = static_cast<bool>(stream_);
    const int closed = ::close(fd_);
    fd_ = -1;
    if (!written || closed != 0) {
      detail::fail(ErrorCode::Io, "error writing '", target_, "' (via '", temp_, "')");
    }
  }

  // Moves the finished file into place.
  void commit() {
    if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
      detail::fail(ErrorCode::Io, "cannot move the finished '", temp_, "' to '", target_,
                   "': ", std::strerror(errno));
    }
    temp_.clear();
  }

 private:
  static ::pid_t process_id() {
    static const ::pid_t id = ::getpid();
    return id;
  }

  std::string target_;
  std::string temp_;
  int fd_ = -1;
  FdStreamBuf buf_;
  std::ostream stream_;
};

}  // namespace dmlref::cli
