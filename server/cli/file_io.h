// The CLI's file access: reading a source file with a size cap, and replacing a file
// atomically so an interrupted `--fix` never leaves a half-written source file, and never
// writes over an edit made while the run read and checked the file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace preflight::server {

// Larger files are reported, not analysed: nothing hand-written is this big. The language
// server uses the same cap for the documents an editor sends.
inline constexpr std::uintmax_t kMaxSourceBytes = 10u * 1024u * 1024u;

// What identifies one version of a file on disk: a write refuses when any of it changed.
struct FileStamp {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::timespec modified{};
  bool operator==(const FileStamp& o) const {
    return device == o.device && inode == o.inode && size == o.size &&
           modified.tv_sec == o.modified.tv_sec && modified.tv_nsec == o.modified.tv_nsec;
  }
};

struct ReadResult {
  std::optional<std::string> text;  // the bytes, unchanged; empty optional on failure
  std::string error;                // user-facing reason when `text` is empty
  FileStamp stamp;                  // the file as it was read (with `text`)
};

ReadResult read_source_file(const std::filesystem::path& path,
                            std::uintmax_t max_bytes = kMaxSourceBytes);

// What a fix write must find on disk before it replaces a file.
struct WriteGuard {
  // The bytes the new content was computed from, and the file they were read from: the
  // write is refused when the file now holds other bytes or is another version.
  std::optional<std::string_view> expected_text;
  std::optional<FileStamp> expected_stamp;
  // Canonical directories or files (the paths named on the command line): a target whose
  // real path lies outside every one of them is refused. Empty: no restriction.
  std::vector<std::filesystem::path> roots;
};

// `path` is `root` or lies below it, component by component (both canonical).
bool path_within(const std::filesystem::path& path, const std::filesystem::path& root);

// The command-line paths as write roots: each one's real path (a missing one is left out).
std::vector<std::filesystem::path> canonical_roots(const std::vector<std::string>& paths);

// Writes `content` to a temporary file in the target's directory, gives it the target's
// permission bits, owner and group, and renames it over the target (through symlinks, so a
// link stays a link). Refused, with the target untouched, when the target:
//   - resolves outside `guard.roots`;
//   - is read-only (no write permission bit, or not writable by this user);
//   - has other hard links (a rename would split them; writing in place could lose the file
//     if interrupted, so neither is done);
//   - belongs to a user or group the new file cannot be given;
//   - changed since it was read (`guard.expected_*`), checked just before the rename.
// Returns an error message, or "" on success.
[[nodiscard]] std::string write_file_atomic(const std::filesystem::path& path,
                                            std::string_view content,
                                            const WriteGuard& guard = {});

}  // namespace preflight::server
