// The run loop's bounded image queue (app/image_queue.hpp) fed by the CUDA engine: a writer slower
// than the GPU makes the GPU side wait for a free buffer; no image is lost, reordered or altered.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "gpu_test_support.hpp"
#include "pipeline/image_queue.hpp"

using namespace grayscott;
using namespace grayscott::testing;

TEST(GpuImageQueue, SlowWriterMakesTheGpuWaitAndLosesNothing) {
  GRAYSCOTT_REQUIRE_GPU();
  constexpr std::int64_t rows = 96, cols = 128, images = 12, steps_per_image = 16;
  constexpr std::size_t capacity = 2;
  constexpr auto writer_delay = std::chrono::milliseconds(25);
  const Problem problem =
      stable_problem(rows, cols, Stencil::oono_puri(), Boundary::Periodic, Precision::Single);
  const auto start = varied_state(rows, cols, 9);
  const auto cells = static_cast<std::size_t>(rows * cols);

  // What each image must hold, from the CPU engine.
  std::vector<std::vector<float>> expected;
  {
    const Parameters params[1] = {problem.params};
    cpu::CpuEngine<float> cpu(problem, params, {"cpu", 0, 0, 0});
    cpu.load(0, to_real<float>(start.u), to_real<float>(start.v));
    for (std::int64_t i = 0; i < images; ++i) {
      cpu.advance(steps_per_image);
      cpu.capture({false, true});
      expected.emplace_back(cells);
      cpu.read_captured(0, nullptr, expected.back().data());
    }
  }

  const Parameters params[1] = {problem.params};
  auto engine = make_engine<float>(problem, params, {"cuda", 0, 0, 0});
  engine->load(0, to_real<float>(start.u), to_real<float>(start.v));
  pipeline::ImageQueue<float> queue(capacity, cells, false, true);

  std::vector<std::vector<float>> written;
  std::vector<std::int64_t> order;
  std::thread writer([&] {
    while (auto slot = queue.pop()) {
      std::this_thread::sleep_for(writer_delay);  // a disk far slower than the GPU
      written.emplace_back(slot->v.begin(), slot->v.end());
      order.push_back(slot->index);
      queue.release(std::move(*slot));
    }
  });

  // The run driver's loop: queue the next image's steps before waiting for this one.
  const auto began = std::chrono::steady_clock::now();
  std::size_t most_in_flight = 0;
  engine->advance(steps_per_image);
  engine->capture({false, true});
  for (std::int64_t i = 0; i < images; ++i) {
    if (i + 1 < images) engine->advance(steps_per_image);
    auto slot = queue.acquire();
    ASSERT_TRUE(slot.has_value());
    engine->read_captured(0, nullptr, slot->v.data());
    slot->index = i;
    queue.push(std::move(*slot));
    most_in_flight = std::max(most_in_flight, queue.in_flight());
    if (i + 1 < images) engine->capture({false, true});
  }
  const auto producer_done = std::chrono::steady_clock::now();
  queue.finish();
  writer.join();

  EXPECT_LE(most_in_flight, capacity);
  // The producer could only reuse a buffer after the writer let go of it.
  EXPECT_GE(producer_done - began, (images - static_cast<std::int64_t>(capacity)) * writer_delay);
  ASSERT_EQ(written.size(), static_cast<std::size_t>(images));
  for (std::int64_t i = 0; i < images; ++i) {
    EXPECT_EQ(order[i], i);
    EXPECT_LE(relative_l2(written[i], to_double(expected[i])), 1e-5) << "image " << i;
  }
}
