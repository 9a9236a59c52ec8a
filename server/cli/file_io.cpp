#include "server/cli/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
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

// Fills the temporary file and gives it `mode`; an error message, or "".
std::string fill_temp_file(int fd, std::string_view content, mode_t mode) {
  if (!write_all(fd, content)) return "could not write: " + errno_text();
  if (::fchmod(fd, mode) != 0) return "could not set permissions: " + errno_text();
  if (::fsync(fd) != 0) return "could not flush: " + errno_text();
  return {};
}

}  // namespace

ReadResult read_source_file(const fs::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return {std::nullopt, "could not read: " + ec.message()};
  if (size > max_bytes)
    return {std::nullopt, "file too large to analyze (" + std::to_string(size) + " bytes)"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return {std::nullopt, "could not read: " + errno_text()};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return {std::nullopt, "could not read: " + errno_text()};
  return {std::move(text), {}};
}

std::string write_file_atomic(const fs::path& path, std::string_view content) {
  std::error_code ec;
  fs::path target = fs::weakly_canonical(path, ec);
  if (ec) target = path;
  struct stat original {};
  if (::stat(target.c_str(), &original) != 0) return "could not write: " + errno_text();

  // Same directory, so the rename cannot cross file systems.
  std::string name = "." + target.filename().string() + ".preflight-XXXXXX";
  std::string pattern = (target.parent_path() / name).string();
  std::vector<char> temp_name(pattern.begin(), pattern.end());
  temp_name.push_back('\0');
  int fd = ::mkstemp(temp_name.data());
  if (fd < 0) return "could not create a temporary file: " + errno_text();

  std::string error = fill_temp_file(fd, content, original.st_mode & 07777);
  if (::close(fd) != 0 && error.empty()) error = "could not write: " + errno_text();
  if (error.empty() && ::rename(temp_name.data(), target.c_str()) != 0)
    error = "could not replace the file: " + errno_text();
  if (!error.empty()) ::unlink(temp_name.data());
  return error;
}

}  // namespace preflight::server
