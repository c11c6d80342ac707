// Temporal blocking on the CPU, one scheme for the local engine's fused steps and for an MPI
// block's steps between two halo exchanges. A band of output rows goes through `levels` steps in
// one pass, reading its input once and writing its output once. The intermediate states (levels
// 1 .. levels-1) live in three rolling rows per level, small enough for the core's own cache,
// filled as a wavefront: at tick t, level l computes its row t - l from rows t-l-1 .. t-l+1 of
// level l-1, the last of which level l-1 computed earlier in the same tick. A band recomputes
// (levels - l) rows of level l beyond each of its ends, which the neighbouring band also computes:
// the price of needing no synchronisation inside a pass. Every row of every level goes through
// update_row with the inputs a one-step sweep would give it, so the result is bitwise the same.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace grayscott::cpu {

// The rolling rows of one band: three rows of u and three of v per intermediate level, `stride`
// values apart, each row's column 0 at `column0` (past an MPI block's ghost columns).
template <class Real>
class RollingRows {
 public:
  static std::size_t size(int levels, std::size_t stride) {
    return static_cast<std::size_t>(std::max(levels - 1, 0)) * 3 * 2 * stride;
  }

  RollingRows(Real* scratch, std::size_t stride, std::size_t column0 = 0)
      : scratch_(scratch), stride_(stride), column0_(column0) {}

  // The rolling row that holds row `row` of level `level` (1 .. levels-1) for field 0 (u) or 1
  // (v): rows three apart share it, and the wavefront is done with a row when it overwrites it.
  Real* row(int level, std::int64_t row, int field) const {
    const auto slot = static_cast<std::size_t>(((row % 3) + 3) % 3);
    return scratch_ +
           ((static_cast<std::size_t>(level - 1) * 3 + slot) * 2 +
            static_cast<std::size_t>(field)) *
               stride_ +
           column0_;
  }

 private:
  Real* scratch_;
  std::size_t stride_;
  std::size_t column0_;
};

// Calls step_row(l, r) for every row r of every level l = 1 .. levels that the band of output rows
// [band_begin, band_end) needs, in the wavefront's order. Level l's rows are the band widened by
// the steps still to go after it (levels - l on each side), within the rows `level_rows(l)` allows
// (a pair: the grid's rows, the rows of an MPI block's region at that step, or no bound at all on
// a periodic grid, whose rows outside it stand for their periodic images).
template <class LevelRows, class StepRow>
void step_wavefront(int levels, std::int64_t band_begin, std::int64_t band_end,
                    const LevelRows& level_rows, const StepRow& step_row) {
  auto level_begin = [&](int l) {
    return std::max<std::int64_t>(band_begin - (levels - l), level_rows(l).first);
  };
  auto level_end = [&](int l) {
    return std::min<std::int64_t>(band_end + (levels - l), level_rows(l).second);
  };
  std::int64_t first_tick = level_begin(1) + 1, end_tick = level_end(1) + 1;
  for (int l = 2; l <= levels; ++l) {
    first_tick = std::min(first_tick, level_begin(l) + l);
    end_tick = std::max(end_tick, level_end(l) + l);
  }
  for (std::int64_t t = first_tick; t < end_tick; ++t) {
    for (int l = 1; l <= levels; ++l) {
      const std::int64_t r = t - l;
      if (r >= level_begin(l) && r < level_end(l)) step_row(l, r);
    }
  }
}

}  // namespace grayscott::cpu
