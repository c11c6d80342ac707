// The copy that takes an image out of the CPU engine: every value copied bit for bit, the finite
// check right wherever a bad value lies (the scalar ends and the vector middle alike), at every
// alignment of the destination, and nothing written past the end.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/cpu/streaming_copy.hpp"

using grayscott::cpu::streaming_copy_finite;
using grayscott::cpu::streaming_fence;

namespace {

template <class Real>
std::vector<Real> ordinary_values(std::size_t n) {
  std::vector<Real> values(n);
  const Real specials[] = {Real(0),
                           -Real(0),
                           std::numeric_limits<Real>::max(),
                           -std::numeric_limits<Real>::max(),
                           std::numeric_limits<Real>::denorm_min(),
                           std::numeric_limits<Real>::min()};
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = i % 7 == 3 ? specials[i % 6] : Real(0.25) * static_cast<Real>(i) - Real(3);
  }
  return values;
}

template <class Real>
void copies_and_checks_at_every_alignment() {
  constexpr std::size_t lanes = 64 / sizeof(Real);  // the widest vector, in values
  const Real bad_values[] = {std::numeric_limits<Real>::quiet_NaN(),
                             std::numeric_limits<Real>::infinity(),
                             -std::numeric_limits<Real>::infinity()};
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, lanes - 1, lanes, lanes + 1, 3 * lanes + 5,
                        std::size_t{1000}}) {
    const std::vector<Real> from = ordinary_values<Real>(n);
    for (std::size_t shift = 0; shift < lanes; ++shift) {
      // The destination starts `shift` values past a 64-byte boundary.
      std::vector<Real> storage(n + 2 * lanes + 16, Real(-7));
      Real* base = storage.data();
      while (reinterpret_cast<std::uintptr_t>(base) % 64 != 0) ++base;
      Real* to = base + shift;
      EXPECT_TRUE(streaming_copy_finite(from.data(), static_cast<std::int64_t>(n), to))
          << "n " << n << ", shift " << shift;
      streaming_fence();
      // Bit for bit; an empty vector's data() may be null, which memcmp may not be given.
      if (n > 0) {
        EXPECT_EQ(std::memcmp(to, from.data(), n * sizeof(Real)), 0) << "n " << n;
      }
      EXPECT_EQ(to[n], Real(-7)) << "nothing written past the end, n " << n << ", shift " << shift;
      if (shift > 0) {
        EXPECT_EQ(to[-1], Real(-7)) << "nor before the start";
      }

      for (std::size_t at : {std::size_t{0}, n / 2, n > 0 ? n - 1 : 0}) {
        if (n == 0) break;
        for (Real bad : bad_values) {
          std::vector<Real> with_bad = from;
          with_bad[at] = bad;
          EXPECT_FALSE(streaming_copy_finite(with_bad.data(), static_cast<std::int64_t>(n), to))
              << "value " << bad << " at " << at << " of " << n << ", shift " << shift;
          streaming_fence();
          EXPECT_EQ(std::memcmp(to, with_bad.data(), n * sizeof(Real)), 0)
              << "copied as it is, bad value and all";
        }
      }
    }
  }
}

}  // namespace

TEST(StreamingCopy, FloatCopiesAndChecksAtEveryAlignment) {
  copies_and_checks_at_every_alignment<float>();
}

TEST(StreamingCopy, DoubleCopiesAndChecksAtEveryAlignment) {
  copies_and_checks_at_every_alignment<double>();
}
