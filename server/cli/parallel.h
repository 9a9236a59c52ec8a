// A minimal worker pool for the CLI: runs task(i) for every index, on at most `jobs` threads.
// Each index runs exactly once; the caller stores results by index, so output does not
// depend on scheduling.
#pragma once

#include <cstddef>
#include <functional>

namespace preflight::server {

// `jobs` <= 1 runs everything on the calling thread. `task` must not throw.
void parallel_for(std::size_t count, unsigned jobs, const std::function<void(std::size_t)>& task);

}  // namespace preflight::server
