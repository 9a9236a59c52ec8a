// The CLI's file access: reading a source file with a size cap, and replacing a file
// atomically so an interrupted `--fix` never leaves a half-written source file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace preflight::server {

// Larger files are reported, not analysed: nothing hand-written is this big.
inline constexpr std::uintmax_t kMaxSourceBytes = 10u * 1024u * 1024u;

struct ReadResult {
  std::optional<std::string> text;  // the bytes, unchanged; empty optional on failure
  std::string error;                // user-facing reason when `text` is empty
};

ReadResult read_source_file(const std::filesystem::path& path,
                            std::uintmax_t max_bytes = kMaxSourceBytes);

// Writes `content` to a temporary file in the target's directory, gives it the target's
// permission bits, and renames it over the target (through symlinks, so a link stays a link).
// Returns an error message, or "" on success; on failure the target is untouched.
[[nodiscard]] std::string write_file_atomic(const std::filesystem::path& path,
                                            std::string_view content);

}  // namespace preflight::server
