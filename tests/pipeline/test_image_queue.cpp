#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "pipeline/image_queue.hpp"

using grayscott::pipeline::ImageQueue;

TEST(ImageQueue, SlowWriterMakesTheProducerWaitAndDropsNothing) {
  ImageQueue<float> queue(3, 16, false, true);
  std::atomic<int> most_in_flight{0};
  std::vector<std::int64_t> received;
  std::thread writer([&] {
    while (auto slot = queue.pop()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a slow disk
      received.push_back(slot->index);
      EXPECT_EQ(slot->v[0], static_cast<float>(slot->index));
      queue.release(std::move(*slot));
    }
  });
  for (int i = 0; i < 50; ++i) {
    auto slot = queue.acquire();
    ASSERT_TRUE(slot);
    slot->index = i;
    std::fill(slot->v.begin(), slot->v.end(), static_cast<float>(i));
    queue.push(std::move(*slot));
    most_in_flight = std::max<int>(most_in_flight, static_cast<int>(queue.in_flight()));
  }
  queue.finish();
  writer.join();
  ASSERT_EQ(received.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(received[i], i);
  EXPECT_LE(most_in_flight, 3);
}

TEST(ImageQueue, CloseWakesAWaitingProducer) {
  ImageQueue<double> queue(1, 4, true, true);
  auto held = queue.acquire();  // the only buffer
  ASSERT_TRUE(held);
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    queue.close();
  });
  EXPECT_FALSE(queue.acquire()) << "a closed queue hands out nothing";
  closer.join();
  EXPECT_FALSE(queue.pop());
}

// drain() returns only once the writer has handed every buffer back: after it, the producer may
// call what the writer was calling (MPI with MPI_THREAD_SERIALIZED).
TEST(ImageQueue, DrainWaitsForTheWriterToFinish) {
  ImageQueue<float> queue(3, 4, false, true);
  std::atomic<int> writing{0}, written{0};
  std::thread writer([&] {
    while (auto slot = queue.pop()) {
      ++writing;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ++written;
      --writing;
      queue.release(std::move(*slot));
    }
  });
  for (int i = 0; i < 10; ++i) {
    auto slot = queue.acquire();
    ASSERT_TRUE(slot);
    queue.push(std::move(*slot));
    queue.drain();
    EXPECT_EQ(written.load(), i + 1);
    EXPECT_EQ(writing.load(), 0);
  }
  queue.finish();
  writer.join();
}

// Before a checkpoint's extra field, the queue waits for the writer and keeps one slot's buffers:
// the one acquire() hands out next, chosen among the slots that hold buffers.
TEST(ImageQueue, DrainAndFreeKeepsTheNextSlotsBuffersOnly) {
  ImageQueue<float> queue(2, 0, false, false);
  auto first = queue.acquire();
  auto second = queue.acquire();
  ASSERT_TRUE(first && second);
  second->v.assign(64, 7.0f);  // only the second slot was ever filled
  queue.release(std::move(*first));
  std::thread writer([&] {
    auto written = queue.pop();
    ASSERT_TRUE(written);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // drain must wait for this
    queue.release(std::move(*written));
  });
  queue.push(std::move(*second));
  queue.drain_and_free_buffers();
  EXPECT_EQ(queue.in_flight(), 0u);
  auto next = queue.acquire();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->v.size(), 64u);  // the slot that holds buffers comes first
  auto other = queue.acquire();
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->u.empty() && other->v.empty());
  queue.finish();
  writer.join();
}
