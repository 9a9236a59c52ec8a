#include "server/cli/version.h"

#ifndef PREFLIGHT_VERSION
#error "PREFLIGHT_VERSION must be defined by the build (server/CMakeLists.txt)"
#endif

namespace preflight::server {

std::string_view preflight_version() { return PREFLIGHT_VERSION; }

}  // namespace preflight::server
