#include "server/cli/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

namespace preflight::server {
namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

bool write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads `fd` to its end; false on a read error.
bool read_all(int fd, std::string& out) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

FileStamp stamp_of(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size, st.st_mtim};
}

// Owned file descriptor.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// Why the file at `target` (canonical, as `st` describes it) must not be replaced, or "".
std::string refusal(const fs::path& target, const struct stat& st, const WriteGuard& guard) {
  if (!guard.roots.empty()) {
    bool inside = false;
    for (const fs::path& root : guard.roots) inside = inside || path_within(target, root);
    if (!inside)
      return "its real path " + target.string() +
             " lies outside the paths given on the command line";
  }
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  // The permission bits as well as access(): root may write anything, and must not either.
  if ((st.st_mode & 0222) == 0 || ::access(target.c_str(), W_OK) != 0)
    return "the file is read-only (like black and ruff, preflight leaves read-only files "
           "unchanged; make it writable to apply fixes)";
  if (st.st_nlink > 1)
    return "the file has " + std::to_string(st.st_nlink) +
           " hard links; replacing it would split them and writing in place could lose it if "
           "interrupted (use --diff and apply the patch, or break the link)";
  return {};
}

// Fills the temporary file and gives it the original's mode, owner and group; an error
// message, or "".
std::string fill_temp_file(int fd, std::string_view content, const struct stat& original) {
  if (!write_all(fd, content)) return "could not write: " + errno_text();
  // Owner and group before the mode: chown may clear set-user-ID and set-group-ID bits.
  if (::fchown(fd, original.st_uid, original.st_gid) != 0)
    return "could not give the new file the original owner and group (uid " +
           std::to_string(original.st_uid) + ", gid " + std::to_string(original.st_gid) +
           "): " + errno_text();
  if (::fchmod(fd, original.st_mode & 07777) != 0)
    return "could not set permissions: " + errno_text();
  if (::fsync(fd) != 0) return "could not flush: " + errno_text();
  return {};
}

// Why the file now on disk is not the one the fixes were computed from, or "".
std::string changed_since_read(const fs::path& target, const WriteGuard& guard) {
  if (!guard.expected_text && !guard.expected_stamp) return {};
  Fd file(::open(target.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  struct stat now {};
  if (file.fd < 0 || ::fstat(file.fd, &now) != 0)
    return "could not re-read the file before replacing it: " + errno_text();
  const std::string changed = "the file changed on disk while preflight checked it; "
                              "your version is kept (run again to fix it)";
  if (guard.expected_stamp && !(stamp_of(now) == *guard.expected_stamp)) return changed;
  if (guard.expected_text) {
    std::string bytes;
    if (!read_all(file.fd, bytes))
      return "could not re-read the file before replacing it: " + errno_text();
    if (bytes != *guard.expected_text) return changed;
  }
  return {};
}

}  // namespace

ReadResult read_source_file(const fs::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  std::uintmax_t size = fs::file_size(path, ec);  // refuses a directory or FIFO before open
  if (ec) return {std::nullopt, "could not read: " + ec.message(), {}};
  if (size > max_bytes)
    return {std::nullopt, "file too large to analyze (" + std::to_string(size) + " bytes)", {}};
  Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0)
    return {std::nullopt, "could not read: " + errno_text(), {}};
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes)  // grew since file_size
    return {std::nullopt, "file too large to analyze (" + std::to_string(st.st_size) + " bytes)",
            {}};
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  if (!read_all(file.fd, text)) return {std::nullopt, "could not read: " + errno_text(), {}};
  return {std::move(text), {}, stamp_of(st)};
}

bool path_within(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p)
    if (p == path.end() || *p != *r) return false;
  return true;
}

std::vector<fs::path> canonical_roots(const std::vector<std::string>& paths) {
  std::vector<fs::path> roots;
  for (const std::string& p : paths) {
    std::error_code ec;
    fs::path root = fs::canonical(p, ec);
    if (!ec) roots.push_back(std::move(root));
  }
  return roots;
}

std::string write_file_atomic(const fs::path& path, std::string_view content,
                              const WriteGuard& guard) {
  std::error_code ec;
  fs::path target = fs::canonical(path, ec);  // through symlinks: a link stays a link
  if (ec) return "could not write: " + ec.message();
  struct stat original {};
  if (::stat(target.c_str(), &original) != 0) return "could not write: " + errno_text();
  if (std::string why = refusal(target, original, guard); !why.empty()) return why;

  // Same directory, so the rename cannot cross file systems.
  std::string name = "." + target.filename().string() + ".preflight-XXXXXX";
  std::string pattern = (target.parent_path() / name).string();
  std::vector<char> temp_name(pattern.begin(), pattern.end());
  temp_name.push_back('\0');
  int fd = ::mkstemp(temp_name.data());
  if (fd < 0) return "could not create a temporary file: " + errno_text();

  std::string error = fill_temp_file(fd, content, original);
  if (::close(fd) != 0 && error.empty()) error = "could not write: " + errno_text();
  // As late as possible: only the rename itself remains after this check.
  if (error.empty()) error = changed_since_read(target, guard);
  if (error.empty() && ::rename(temp_name.data(), target.c_str()) != 0)
    error = "could not replace the file: " + errno_text();
  if (!error.empty()) ::unlink(temp_name.data());
  return error;
}

}  // namespace preflight::server
