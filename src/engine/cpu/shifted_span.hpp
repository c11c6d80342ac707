// The cells of a row for a built-in stencil on AVX-512 or AVX2, with fewer loads and the same
// cells, rounded exactly as step_cell() rounds them.
//
// Why: the per-cell loop (row_kernel.hpp's update_span) loads the left and right neighbours of
// every vector of cells at one element off the vector, so such a load spans two cache lines for
// every vector on AVX-512 and every second one on AVX2: 12 of its 19 loads per vector are
// neighbours one off, and on an AVX-512 Xeon the loop is bound by them, not by arithmetic
// (docs/benchmarks.md). Here each row of each field is loaded once per vector, at the vector's own
// columns, and the left and right neighbours are the vector and its neighbour vector shifted by
// one lane in registers (valignd/valignq; on AVX2 a swap of 128-bit halves and a byte alignment
// within them). The column pairs (above + below) are summed once per column and shifted likewise,
// as step_cell() sums them first. The sums and the update are step_cell()'s, in its order, lane by
// lane: the results are bitwise those of the per-cell loop (tests/engine: every path against every
// other).
//
// A row's end cells take the same loop: the column beyond the grid's edge is three values that
// the boundary rule gives (row_kernel.hpp's outside_column), shifted in as a neighbour vector's
// lane would be. Stepped in a masked loop of their own instead (a cache line of cells at each
// end), the two ends cost as much as about six of the loop's vectors on an AMD EPYC (Zen 4): 5 to
// 10 % of the course grid's rows, half of a 128-wide batch member's (docs/benchmarks.md).
//
// On AVX2 (16 vector registers, not 32) only the column sums, which are in no memory to load, are
// shifted: carrying each field's row and its shifted copy as well spilled them to the stack, six
// stores per vector beside the two results, and loading the rows' neighbours one off is cheaper
// there (VectorOps::shifts_rows; docs/benchmarks.md has both measured on an AMD EPYC).
#pragma once

#include <cstdint>
#include <type_traits>

#include "model/cell_update.hpp"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define GRAYSCOTT_SHIFTED_SPAN 1
#else
#define GRAYSCOTT_SHIFTED_SPAN 0
#endif

// The loop's steps are inlined by force, as row_kernel.hpp's cells are: a call per vector would
// cost more than the vector's arithmetic.
#define GRAYSCOTT_SHIFTED_INLINE __attribute__((always_inline))

namespace grayscott::cpu::detail {

#if GRAYSCOTT_SHIFTED_SPAN

// The operations shifted_span() needs on this build's widest vectors of Real, and whether it
// shifts the rows (shifts_rows) or loads their neighbours.
template <class Real>
struct VectorOps;

#if defined(__AVX512F__)

template <>
struct VectorOps<float> {
  using V = __m512;
  static constexpr int lanes = 16;
  static constexpr bool shifts_rows = true;
  // Every lane: the shifts below are written masked because GCC 12's unmasked forms pass an
  // undefined vector that it then reports as maybe uninitialised; a full mask compiles to the
  // plain instruction.
  static constexpr __mmask16 all = 0xFFFF;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V multiply_add(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V broadcast(float x) { return _mm512_set1_ps(x); }
  // Lanes j - 1 .. j + 14 from the vectors at j - 16 (before) and j (at).
  static V left(V at, V before) {
    return _mm512_castsi512_ps(
        _mm512_maskz_alignr_epi32(all, _mm512_castps_si512(at), _mm512_castps_si512(before),
                                  lanes - 1));
  }
  // Lanes j + 1 .. j + 16 from the vectors at j (at) and j + 16 (after).
  static V right(V after, V at) {
    return _mm512_castsi512_ps(
        _mm512_maskz_alignr_epi32(all, _mm512_castps_si512(after), _mm512_castps_si512(at), 1));
  }
};

template <>
struct VectorOps<double> {
  using V = __m512d;
  static constexpr int lanes = 8;
  static constexpr bool shifts_rows = true;
  static constexpr __mmask8 all = 0xFF;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V multiply_add(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V broadcast(double x) { return _mm512_set1_pd(x); }
  static V left(V at, V before) {
    return _mm512_castsi512_pd(
        _mm512_maskz_alignr_epi64(all, _mm512_castpd_si512(at), _mm512_castpd_si512(before),
                                  lanes - 1));
  }
  static V right(V after, V at) {
    return _mm512_castsi512_pd(
        _mm512_maskz_alignr_epi64(all, _mm512_castpd_si512(after), _mm512_castpd_si512(at), 1));
  }
};

#else  // AVX2 and FMA: 256-bit vectors, shifted across their two 128-bit halves

template <>
struct VectorOps<float> {
  using V = __m256;
  static constexpr int lanes = 8;
  static constexpr bool shifts_rows = false;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V multiply_add(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V broadcast(float x) { return _mm256_set1_ps(x); }
  // Lanes j - 1 .. j + 6: `middle` is lanes j - 4 .. j + 3 (before's upper half, at's lower), and
  // each half of the result is four lanes of (at, middle) one lane back.
  static V left(V at, V before) {
    const V middle = _mm256_permute2f128_ps(before, at, 0x21);
    return _mm256_castsi256_ps(
        _mm256_alignr_epi8(_mm256_castps_si256(at), _mm256_castps_si256(middle), 12));
  }
  // Lanes j + 1 .. j + 8: `middle` is lanes j + 4 .. j + 11, each half of the result four lanes of
  // (middle, at) one lane on. The same middle as left(after, at): computed once where both are.
  static V right(V after, V at) {
    const V middle = _mm256_permute2f128_ps(at, after, 0x21);
    return _mm256_castsi256_ps(
        _mm256_alignr_epi8(_mm256_castps_si256(middle), _mm256_castps_si256(at), 4));
  }
};

template <>
struct VectorOps<double> {
  using V = __m256d;
  static constexpr int lanes = 4;
  static constexpr bool shifts_rows = false;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V multiply_add(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V broadcast(double x) { return _mm256_set1_pd(x); }
  // As for float, with two lanes per half: a shuffle of (middle, at) takes one of each.
  static V left(V at, V before) {
    const V middle = _mm256_permute2f128_pd(before, at, 0x21);
    return _mm256_shuffle_pd(middle, at, 0b0101);
  }
  static V right(V after, V at) {
    const V middle = _mm256_permute2f128_pd(at, after, 0x21);
    return _mm256_shuffle_pd(at, middle, 0b0101);
  }
};

#endif

// Whether shifted_span() takes stencil K in precision Real: built-in stencils (a custom table
// keeps the per-cell loop), both precisions.
template <StencilKind K, class Real>
inline constexpr bool has_shifted_span = K != StencilKind::Custom && (std::is_same_v<Real, float> ||
                                                                      std::is_same_v<Real, double>);

// react_folded() on vectors, in its order: the coefficients broadcast once per row.
template <class Real>
struct VectorReaction {
  using Ops = VectorOps<Real>;
  using V = typename Ops::V;
  V u_centre, u_nearest, u_diagonal, dt_feed, v_centre, v_nearest, v_diagonal, dt, minus_dt;
  explicit VectorReaction(const Coefficients<Real>& c)
      : u_centre(Ops::broadcast(c.u_centre)), u_nearest(Ops::broadcast(c.u_nearest)),
        u_diagonal(Ops::broadcast(c.u_diagonal)), dt_feed(Ops::broadcast(c.dt_feed)),
        v_centre(Ops::broadcast(c.v_centre)), v_nearest(Ops::broadcast(c.v_nearest)),
        v_diagonal(Ops::broadcast(c.v_diagonal)), dt(Ops::broadcast(c.dt)),
        minus_dt(Ops::broadcast(-c.dt)) {}
  // The next u and v of the cells whose values are u, v, from their neighbours' sums (the
  // diagonal ones read only where the stencil has them), stored at out_u, out_v.
  template <bool HasDiagonal>
  void store(V u, V v, V nearest_u, V nearest_v, V diagonal_u, V diagonal_v, Real* out_u,
             Real* out_v) const {
    const V uvv = Ops::mul(Ops::mul(u, v), v);
    V un = Ops::multiply_add(u_centre, u, dt_feed);
    V vn = Ops::mul(v_centre, v);
    if constexpr (HasDiagonal) {
      un = Ops::multiply_add(u_diagonal, diagonal_u, un);
      vn = Ops::multiply_add(v_diagonal, diagonal_v, vn);
    }
    un = Ops::multiply_add(u_nearest, nearest_u, un);
    vn = Ops::multiply_add(v_nearest, nearest_v, vn);
    Ops::store(out_u, Ops::multiply_add(minus_dt, uvv, un));
    Ops::store(out_v, Ops::multiply_add(dt, uvv, vn));
  }
};

// One field's column of three values beside a span of a row: in the rows above, at and below it.
// Next to the span in memory, or standing for what lies beyond the grid's edge (row_kernel.hpp's
// outside_column: what beyond_edge() gives, or a periodic row's other end).
template <class Real>
struct Column {
  Real above, at, below;
};

// The columns left and right of a span, for u and v.
template <class Real>
struct SpanEnds {
  Column<Real> left_u, left_v, right_u, right_v;
};

// One field's rows of neighbours as the loop walks them, a vector at a time: at the current
// vector, its column sums (above + below) and the row itself, and both one lane left of it.
template <class Real>
struct ShiftedRows {
  using Ops = VectorOps<Real>;
  using V = typename Ops::V;
  struct Vectors {
    V sums, row;
  };
  const Real* above;
  const Real* at_row;
  const Real* below;
  Vectors at, left;

  // At the vector at j, whose left neighbours' column is `before`.
  ShiftedRows(const Real* a, const Real* m, const Real* b, std::int64_t j,
              const Column<Real>& before)
      : above(a), at_row(m), below(b), at(load(j)) {
    const Vectors column = broadcast(before);
    left = {Ops::left(at.sums, column.sums), Ops::left(at.row, column.row)};
  }
  Vectors load(std::int64_t j) const {
    return {Ops::add(Ops::load(above + j), Ops::load(below + j)), Ops::load(at_row + j)};
  }
  // A column in every lane, of which only the one next to a vector is read.
  static Vectors broadcast(const Column<Real>& column) {
    return {Ops::add(Ops::broadcast(column.above), Ops::broadcast(column.below)),
            Ops::broadcast(column.at)};
  }
  Column<Real> column(std::int64_t j) const { return {above[j], at_row[j], below[j]}; }
  // The row at the vector at j and its left and right neighbours: shifted in registers (Shifted),
  // or loaded where the vectors are too few to carry them (the rows then carried are never read,
  // and the compiler drops them).
  template <bool Shifted>
  V row(std::int64_t j) const {
    if constexpr (Shifted)
      return at.row;
    else
      return Ops::load(at_row + j);
  }
  template <bool Shifted>
  V row_left(std::int64_t j) const {
    if constexpr (Shifted)
      return left.row;
    else
      return Ops::load(at_row + j - 1);
  }
  template <bool Shifted>
  V row_right(std::int64_t j, const Vectors& next) const {
    if constexpr (Shifted)
      return Ops::right(next.row, at.row);
    else
      return Ops::load(at_row + j + 1);
  }
  // Moves one vector right, to `next`: this vector becomes its left neighbours (the row's only
  // where it is shifted).
  template <bool Shifted>
  void slide(const Vectors& next) {
    left.sums = Ops::left(next.sums, at.sums);
    if constexpr (Shifted) left.row = Ops::left(next.row, at.row);
    at = next;
  }
  // The rows at the vector at j, and left of it, as a shifting step reads them after steps that
  // loaded them: loaded again (j - 1 is in the span when j is past its start).
  void reload_row(std::int64_t j, bool past_start) {
    if constexpr (!Ops::shifts_rows) {
      at.row = Ops::load(at_row + j);
      if (past_start) left.row = Ops::load(at_row + j - 1);
    }
  }
};

// The cells [j0, j1) of a row, at least a vector of them, each as step_cell() computes it: the
// span's own columns, rows above and below included, are in memory, and `ends` gives the columns
// beside it (in memory or beyond the grid's edge), so that a whole row, its end cells included,
// takes this loop. Whole vectors from j0, then, for a rest shorter than a vector, the span's last
// vector again (recomputing a few cells: harmless, the output does not alias the input).
template <StencilKind K, class Real>
inline void shifted_span(const Real* u0, const Real* u1, const Real* u2, const Real* v0,
                         const Real* v1, const Real* v2, std::int64_t j0, std::int64_t j1,
                         const SpanEnds<Real>& ends, const Coefficients<Real>& c,
                         Real* __restrict out_u, Real* __restrict out_v) {
  using Ops = VectorOps<Real>;
  using V = typename Ops::V;
  using Vectors = typename ShiftedRows<Real>::Vectors;
  constexpr std::int64_t lanes = Ops::lanes;
  constexpr bool has_diagonal = folded_weights(K).diagonal != 0.0;
  constexpr bool shifts = Ops::shifts_rows;
  const VectorReaction<Real> reaction(c);
  // The vector at j, the next one (`u_next`, `v_next`) giving its right neighbours. step_cell():
  // nearest = (above + below) + (left + right), diagonal = the column sums left + right; then
  // react_folded(). ShiftsLeft, ShiftsRight: whether the row's neighbours on that side are shifted
  // from the vectors carried or loaded (a side beside the span's ends is always shifted).
  const auto step = [&]<bool ShiftsLeft, bool ShiftsRight>(
                        std::int64_t j, const ShiftedRows<Real>& u, const ShiftedRows<Real>& v,
                        const Vectors& u_next, const Vectors& v_next) GRAYSCOTT_SHIFTED_INLINE {
    const V nearest_u = Ops::add(u.at.sums, Ops::add(u.template row_left<ShiftsLeft>(j),
                                                     u.template row_right<ShiftsRight>(j, u_next)));
    const V nearest_v = Ops::add(v.at.sums, Ops::add(v.template row_left<ShiftsLeft>(j),
                                                     v.template row_right<ShiftsRight>(j, v_next)));
    V diagonal_u{}, diagonal_v{};
    if constexpr (has_diagonal) {
      diagonal_u = Ops::add(u.left.sums, Ops::right(u_next.sums, u.at.sums));
      diagonal_v = Ops::add(v.left.sums, Ops::right(v_next.sums, v.at.sums));
    }
    constexpr bool carried = ShiftsLeft && ShiftsRight;
    reaction.template store<has_diagonal>(u.template row<carried>(j), v.template row<carried>(j),
                                          nearest_u, nearest_v, diagonal_u, diagonal_v, out_u + j,
                                          out_v + j);
  };
  // The last vector, at j: its right neighbours the column j + lanes, which is `ends`' where the
  // vector ends the span.
  const auto step_last = [&](std::int64_t j, ShiftedRows<Real>& u, ShiftedRows<Real>& v,
                             bool past_start) GRAYSCOTT_SHIFTED_INLINE {
    u.reload_row(j, past_start);
    v.reload_row(j, past_start);
    const bool at_end = j + lanes == j1;
    step.template operator()<true, true>(
        j, u, v, ShiftedRows<Real>::broadcast(at_end ? ends.right_u : u.column(j + lanes)),
        ShiftedRows<Real>::broadcast(at_end ? ends.right_v : v.column(j + lanes)));
  };
  ShiftedRows<Real> u(u0, u1, u2, j0, ends.left_u), v(v0, v1, v2, j0, ends.left_v);
  std::int64_t j = j0;
  if (j + 2 * lanes <= j1) {
    // The first vector: its left neighbours shifted in from `ends`.
    const Vectors u_next = u.load(j + lanes), v_next = v.load(j + lanes);
    step.template operator()<true, shifts>(j, u, v, u_next, v_next);
    u.template slide<shifts>(u_next);
    v.template slide<shifts>(v_next);
    j += lanes;
  }
  // The vectors whose next vector is whole in the span. On AVX2, unrolled to two per turn: the
  // same instructions per vector, yet a row takes 7-17 % less time on an AMD EPYC (Zen 3) in both
  // precisions (docs/benchmarks.md; the VM shows no counters that would say why). AVX-512 builds
  // keep one vector per turn, which is what their figures measured.
#if !defined(__AVX512F__)
#pragma GCC unroll 2
#endif
  for (; j + 2 * lanes <= j1; j += lanes) {
    const Vectors u_next = u.load(j + lanes), v_next = v.load(j + lanes);
    step.template operator()<shifts, shifts>(j, u, v, u_next, v_next);
    u.template slide<shifts>(u_next);
    v.template slide<shifts>(v_next);
  }
  if (j + lanes <= j1) {
    step_last(j, u, v, j > j0);
    j += lanes;
  }
  if (j < j1) {
    // The rest: the span's last vector again, its left neighbours in the span.
    const std::int64_t last = j1 - lanes;
    ShiftedRows<Real> u_last(u0, u1, u2, last, u.column(last - 1)),
        v_last(v0, v1, v2, last, v.column(last - 1));
    step_last(last, u_last, v_last, false);
  }
}

// A row of a volume for the seven-point stencil, as shifted_span() takes a plane's: each of the
// five rows a cell reads (its own, the rows before and after it, the planes below and above it)
// loaded once per vector at the vector's own columns, the left and right neighbours its own row
// shifted by a lane. The faces are summed as step_volume_cell() sums them, lane by lane:
// ((below + above) + (before + after)) + (left + right), then react_folded(). `u` and `v` are
// volume_kernel.hpp's rows [dz + 1][dr + 1], all five in memory for columns j0 to j1 - 1; the
// own row's values beside the span are `left_u` ... `right_v` (from memory next to it, or what the
// boundary gives beyond the volume's edge: row_kernel.hpp's outside_cell). At least a vector of
// cells; a rest shorter than a vector is the span's last vector again.
template <class Real>
inline void shifted_volume_span(const Real* const (&u)[3][3], const Real* const (&v)[3][3],
                                std::int64_t j0, std::int64_t j1, Real left_u, Real left_v,
                                Real right_u, Real right_v, const Coefficients<Real>& c,
                                Real* __restrict out_u, Real* __restrict out_v) {
  using Ops = VectorOps<Real>;
  using V = typename Ops::V;
  constexpr std::int64_t lanes = Ops::lanes;
  const VectorReaction<Real> reaction(c);
  // One field's rows, and its own row at the current vector and one lane left of it.
  struct Field {
    const Real* below;
    const Real* above;
    const Real* before;
    const Real* after;
    const Real* row;
    V at, left;
    // At the vector at j, the cell left of it `beside`.
    Field(const Real* const (&rows)[3][3], std::int64_t j, Real beside)
        : below(rows[0][1]),
          above(rows[2][1]),
          before(rows[1][0]),
          after(rows[1][2]),
          row(rows[1][1]),
          at(Ops::load(row + j)),
          left(Ops::left(at, Ops::broadcast(beside))) {}
    V next(std::int64_t j) const { return Ops::load(row + j); }
    // The six faces of the cells at j, the next vector `next` giving the right neighbours.
    V faces(std::int64_t j, V next) const {
      const V pairs = Ops::add(Ops::add(Ops::load(below + j), Ops::load(above + j)),
                               Ops::add(Ops::load(before + j), Ops::load(after + j)));
      return Ops::add(pairs, Ops::add(left, Ops::right(next, at)));
    }
    void slide(V next) {
      left = Ops::left(next, at);
      at = next;
    }
  };
  const auto step = [&](std::int64_t j, const Field& fu, const Field& fv, V u_next,
                        V v_next) GRAYSCOTT_SHIFTED_INLINE {
    reaction.template store<false>(fu.at, fv.at, fu.faces(j, u_next), fv.faces(j, v_next), V{}, V{},
                                   out_u + j, out_v + j);
  };
  // The last vector, at j: its right neighbours the cell at j + lanes, beside the span where the
  // vector ends it (only the next vector's first lane is read).
  const auto step_last = [&](std::int64_t j, const Field& fu,
                             const Field& fv) GRAYSCOTT_SHIFTED_INLINE {
    const bool at_end = j + lanes == j1;
    step(j, fu, fv, Ops::broadcast(at_end ? right_u : fu.row[j + lanes]),
         Ops::broadcast(at_end ? right_v : fv.row[j + lanes]));
  };
  Field fu(u, j0, left_u), fv(v, j0, left_v);
  std::int64_t j = j0;
  for (; j + 2 * lanes <= j1; j += lanes) {
    const V u_next = fu.next(j + lanes), v_next = fv.next(j + lanes);
    step(j, fu, fv, u_next, v_next);
    fu.slide(u_next);
    fv.slide(v_next);
  }
  if (j + lanes <= j1) {
    step_last(j, fu, fv);
    j += lanes;
  }
  if (j < j1) {
    // The rest: the span's last vector again, its left neighbours in the span.
    const std::int64_t last = j1 - lanes;
    step_last(last, Field(u, last, fu.row[last - 1]), Field(v, last, fv.row[last - 1]));
  }
}

#endif  // GRAYSCOTT_SHIFTED_SPAN

}  // namespace grayscott::cpu::detail
