#include "server/cli/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace preflight::server {

void parallel_for(std::size_t count, unsigned jobs, const std::function<void(std::size_t)>& task) {
  std::size_t threads = std::min<std::size_t>(jobs, count);
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) task(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) task(i);
  };
  std::vector<std::jthread> pool;
  pool.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
}

}  // namespace preflight::server
