// The CLI's worker pools: every index runs once; ordered_parallel_for hands results over in
// index order, one at a time, and never lets more than `window` results wait however the
// work is scheduled (random delays stand in for files of very different sizes).
#include "server/cli/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

namespace preflight::server {
namespace {

// A few hundred microseconds for some indices, none for the rest; the same for a seed.
std::chrono::microseconds delay_for(std::size_t i, unsigned seed) {
  std::mt19937 rng(seed + static_cast<unsigned>(i));
  return std::chrono::microseconds(rng() % 4 == 0 ? rng() % 800 : 0);
}

TEST(ParallelFor, RunsEveryIndexOnce) {
  std::vector<std::atomic<int>> runs(500);
  parallel_for(runs.size(), 4, [&](std::size_t i) { ++runs[i]; });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
}

TEST(OrderedParallelFor, HandsResultsOverInIndexOrder) {
  for (unsigned jobs : {1u, 2u, 8u}) {
    std::vector<std::size_t> seen;
    ordered_parallel_for<std::size_t>(
        300, jobs, 16,
        [&](std::size_t i) {
          std::this_thread::sleep_for(delay_for(i, jobs));
          return i;
        },
        [&](std::size_t&& i) { seen.push_back(i); });
    ASSERT_EQ(seen.size(), 300u) << jobs << " jobs";
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i) << jobs << " jobs";
  }
}

TEST(OrderedParallelFor, ConsumesOneAtATime) {
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  ordered_parallel_for<int>(
      400, 8, 32, [](std::size_t i) { return static_cast<int>(i); },
      [&](int&&) {
        int now = ++inside;
        most = std::max(most.load(), now);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        --inside;
      });
  EXPECT_EQ(most.load(), 1);
}

TEST(OrderedParallelFor, NoMoreThanTheWindowWaitsBehindASlowIndex) {
  constexpr std::size_t kWindow = 8;
  std::atomic<std::size_t> produced{0}, consumed{0}, most_waiting{0};
  ordered_parallel_for<std::size_t>(
      200, 4, kWindow,
      [&](std::size_t i) {
        // Index 10 is slow: the others must stop at the window instead of racing ahead.
        if (i == 10) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::size_t waiting = ++produced - consumed.load();
        std::size_t seen = most_waiting.load();
        while (waiting > seen && !most_waiting.compare_exchange_weak(seen, waiting)) {
        }
        return i;
      },
      [&](std::size_t&&) { ++consumed; });
  EXPECT_EQ(consumed.load(), 200u);
  EXPECT_LE(most_waiting.load(), kWindow);
}

TEST(OrderedParallelFor, NothingToDoIsFine) {
  int calls = 0;
  ordered_parallel_for<int>(
      0, 4, 8, [&](std::size_t) { return ++calls; }, [&](int&&) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace preflight::server
