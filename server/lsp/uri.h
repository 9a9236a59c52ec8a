// file:// URIs <-> filesystem paths (RFC 8089 as editors write them: percent-encoded UTF-8,
// empty authority). Other schemes (untitled:, vscode-notebook-cell:) have no path.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace preflight::lsp {

std::optional<std::filesystem::path> uri_to_path(std::string_view uri);
std::string path_to_uri(const std::filesystem::path& path);

}  // namespace preflight::lsp
