// A minimal worker pool for the CLI: runs task(i) for every index, on at most `jobs` threads.
// Each index runs exactly once; results are stored by index or handed over in index order,
// so output does not depend on scheduling.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace preflight::server {

// `jobs` <= 1 runs everything on the calling thread. `task` must not throw.
void parallel_for(std::size_t count, unsigned jobs, const std::function<void(std::size_t)>& task);

// Runs produce(i) for every index on at most `jobs` threads and hands each result to
// consume() in index order, one call at a time. No worker runs more than `window` indices
// ahead of the next result to consume, so what waits is bounded however long one index
// takes. Neither function may throw.
template <class Result>
void ordered_parallel_for(std::size_t count, unsigned jobs, std::size_t window,
                          const std::function<Result(std::size_t)>& produce,
                          const std::function<void(Result&&)>& consume) {
  std::size_t threads = std::min<std::size_t>(jobs, count);
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) consume(produce(i));
    return;
  }
  window = std::max(window, threads);
  std::mutex mu;
  std::condition_variable room;
  std::vector<std::optional<Result>> ring(window);  // index i waits in ring[i % window]
  std::size_t next = 0;     // the next index to hand out
  std::size_t emitted = 0;  // results consumed so far
  bool emitting = false;    // a thread is consuming: the others only store
  auto worker = [&] {
    for (;;) {
      std::unique_lock lock(mu);
      if (next >= count) return;
      std::size_t i = next++;
      room.wait(lock, [&] { return i < emitted + window; });
      lock.unlock();
      Result result = produce(i);
      lock.lock();
      ring[i % window] = std::move(result);
      if (emitting) continue;
      emitting = true;
      while (emitted < count && ring[emitted % window]) {
        Result ready = std::move(*ring[emitted % window]);
        ring[emitted % window].reset();
        lock.unlock();
        consume(std::move(ready));  // outside the lock: workers keep storing meanwhile
        lock.lock();
        ++emitted;
        room.notify_all();
      }
      emitting = false;
    }
  };
  std::vector<std::jthread> pool;
  pool.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
}

}  // namespace preflight::server
