// The version the executable reports (--version, SARIF's tool.driver.version): the CMake
// project version.
#pragma once

#include <string_view>

namespace preflight::server {

std::string_view preflight_version();

}  // namespace preflight::server
