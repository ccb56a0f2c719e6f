// The suite's manifest: suite.json's "manifest" member, the SHA-256 (OpenSSL's libcrypto) of every
// file `generate` wrote except suite.json itself, keyed by its POSIX path relative to the suite:
//   "manifest": {"algorithm": "sha256", "files": {"join/000_x/case.json": "<64 hex>", ...}}
// A suite is intact when every listed file is a regular file (no symlink anywhere on its path)
// inside the suite with that hash. verify checks it before anything else; generate --overwrite
// replaces only a directory whose manifest matches everything it holds.
#pragma once

#include "cli_files.hpp"
#include "suite.hpp"

#include <openssl/evp.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <set>

namespace dmlref_suite {

// A suite that is not the one generated: exit 2, naming the file.
struct TamperedSuite : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// No file of a suite is larger than this (the largest generated buffer is a few MiB); a bigger
// one is refused at once rather than hashed.
inline constexpr std::uint64_t kMaxSuiteFileBytes = std::uint64_t{1} << 30;
// suite.json itself (its manifest lists every file of the suite: about 100 bytes each).
inline constexpr std::uint64_t kMaxSuiteJsonBytes = std::uint64_t{64} << 20;

// The lowercase hex SHA-256 of a regular file, read in pieces (never whole). `path` must not be a
// symlink (O_NOFOLLOW); anything but a regular file of at most `max_bytes` is refused.
inline std::string sha256_file(const std::string& path, std::uint64_t max_bytes = kMaxSuiteFileBytes) {
  const int fd = dmlref::cli::open_regular_file(path, max_bytes, /*follow_symlinks=*/false);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("libcrypto: cannot start a SHA-256 digest");
  }
  // On the stack and not zeroed: a 1 MiB vector per file (nearly all hold a few KiB) cost a 1 MiB
  // memset and its page faults each (verify of the default 4,849-file suite: 0.19 s, now 0.16 s).
  std::array<unsigned char, std::size_t{1} << 16> buffer;
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw dmlref::cli::FileRefused(path, std::string(": cannot read it: ") + std::strerror(errno));
    }
    if (n == 0) break;
    total += static_cast<std::uint64_t>(n);
    if (total > max_bytes) {
      throw dmlref::cli::FileRefused(path, " grew past " + std::to_string(max_bytes) + " bytes");
    }
    if (EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<std::size_t>(n)) != 1) {
      throw std::runtime_error("libcrypto: SHA-256 update failed");
    }
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest.data(), &length) != 1 || length != 32) {
    throw std::runtime_error("libcrypto: SHA-256 final failed");
  }
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xF];
  }
  return out;
}

// Whether a manifest path is a plain relative POSIX path: no empty, "." or ".." component, no
// leading '/', no backslash or NUL.
inline bool plain_relative_path(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string_view::npos ||
      p.find('\0') != std::string_view::npos) {
    return false;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = p.find('/', start);
    const std::string_view part = p.substr(start, slash == std::string_view::npos ? p.npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

// Every regular file under `dir` (not following symlinks), as relative POSIX paths, sorted.
inline std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (fs::is_regular_file(it->symlink_status())) out.push_back(fs::relative(it->path(), dir).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The manifest of the suite being built in `dir`: every file in it except suite.json.
inline Json make_manifest(const fs::path& dir) {
  Json files = Json::object();
  for (const std::string& rel : files_under(dir)) {
    if (rel == "suite.json") continue;
    files.set(rel, sha256_file((dir / rel).string()));
  }
  Json m = Json::object();
  m.set("algorithm", "sha256");
  m.set("files", std::move(files));
  return m;
}

// Reads suite.json: a regular file of bounded size.
inline Json read_suite_json(const fs::path& suite) {
  const fs::path path = suite / "suite.json";
  try {
    return Json::parse(dmlref::cli::read_regular_file(path.string(), kMaxSuiteJsonBytes));
  } catch (const FormatError& e) {
    throw TamperedSuite(path.string() + ": " + e.what());
  } catch (const dmlref::cli::FileRefused& e) {
    throw TamperedSuite(e.what());
  }
}

// Checks every file the manifest lists (see the top); returns the listed paths. A file not
// listed is not looked at. Throws TamperedSuite naming the first file that differs.
inline std::set<std::string> check_manifest(const fs::path& suite, const Json& suite_json) {
  const fs::path where = suite / "suite.json";
  const Json* manifest = suite_json.is_object() ? suite_json.find("manifest") : nullptr;
  if (manifest == nullptr || !manifest->is_object()) {
    throw TamperedSuite(where.string() + " has no manifest (generate it again with this dmlref-check)");
  }
  const Json* algorithm = manifest->find("algorithm");
  if (algorithm == nullptr || !algorithm->is_string() || algorithm->str() != "sha256") {
    throw TamperedSuite(where.string() + ": the manifest's algorithm is not \"sha256\"");
  }
  const Json* files = manifest->find("files");
  if (files == nullptr || !files->is_object() || files->members().empty()) {
    throw TamperedSuite(where.string() + ": the manifest lists no files");
  }
  std::set<std::string> listed;
  for (const auto& [rel, hash] : files->members()) {
    const std::string shown = "'" + dmlref::detail::escape_bytes(rel) + "'";
    if (!plain_relative_path(rel) || rel == "suite.json") {
      throw TamperedSuite(where.string() + ": the manifest lists " + shown +
                          ", which is not a relative path inside the suite");
    }
    if (!hash.is_string() || hash.str().size() != 64 ||
        hash.str().find_first_not_of("0123456789abcdef") != std::string::npos) {
      throw TamperedSuite(where.string() + ": the manifest's hash of " + shown + " is not 64 lowercase hex digits");
    }
    // Every directory on the way must be a real directory: no symlink leads out of the suite.
    fs::path at = suite;
    std::size_t start = 0;
    for (std::size_t slash; (slash = rel.find('/', start)) != std::string::npos; start = slash + 1) {
      at /= rel.substr(start, slash - start);
      struct stat st {};
      if (::lstat(at.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw TamperedSuite("the suite is modified: " + shown + " is not inside a directory of the suite (" +
                            dmlref::detail::escape_bytes(at.string()) + " is missing or not a directory)");
      }
    }
    std::string actual;
    try {
      actual = sha256_file((suite / rel).string());
    } catch (const dmlref::cli::FileRefused& e) {
      throw TamperedSuite("the suite is modified: " + std::string(e.what()));
    }
    if (actual != hash.str()) {
      throw TamperedSuite("the suite is modified: " + shown + " does not have the SHA-256 its manifest lists");
    }
    listed.insert(rel);
  }
  return listed;
}

}  // namespace dmlref_suite
