//===- ParallelFor.h - Independent work items on every core ---------------===//
#ifndef COHERE2C_SUPPORT_PARALLELFOR_H
#define COHERE2C_SUPPORT_PARALLELFOR_H

#include <atomic>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace cohere2c {

/// Calls fn(i) for every i in [0, count), items taken in order by a thread
/// per core, the calling thread included (where no more threads can be
/// started, the ones there are share the items). Returns when all are done.
template <typename Fn> void parallelFor(size_t count, const Fn &fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++)
      fn(i);
  };
  std::vector<std::thread> threads;
  unsigned cores = std::thread::hardware_concurrency();
  for (unsigned i = 1; i < cores && i < count; ++i) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error &) {
      break;
    }
  }
  worker();
  for (std::thread &t : threads)
    t.join();
}

} // namespace cohere2c

#endif // COHERE2C_SUPPORT_PARALLELFOR_H
