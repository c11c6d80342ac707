// The inner columns of a row for a built-in stencil on AVX-512 or AVX2, with fewer loads and the
// same cells, rounded exactly as step_cell() rounds them.
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
  static V load_first_lane(const float* p) { return _mm512_maskz_loadu_ps(1, p); }
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
  static V load_first_lane(const double* p) { return _mm512_maskz_loadu_pd(1, p); }
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
  static V load_first_lane(const float* p) { return _mm256_zextps128_ps256(_mm_load_ss(p)); }
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
  static V load_first_lane(const double* p) { return _mm256_zextpd128_pd256(_mm_load_sd(p)); }
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

  ShiftedRows(const Real* a, const Real* m, const Real* b, std::int64_t j0)
      : above(a), at_row(m), below(b) {
    at = load(j0, true);
    // The first vector's left neighbours: one element off the vector, loaded as they are.
    left = {Ops::add(Ops::load(a + j0 - 1), Ops::load(b + j0 - 1)), Ops::load(m + j0 - 1)};
  }
  // The vector at column j; with `whole` false only its first lane is read (the others are 0).
  Vectors load(std::int64_t j, bool whole) const {
    if (whole) return {Ops::add(Ops::load(above + j), Ops::load(below + j)), Ops::load(at_row + j)};
    return {Ops::add(Ops::load_first_lane(above + j), Ops::load_first_lane(below + j)),
            Ops::load_first_lane(at_row + j)};
  }
  // The row at the vector at j and its left and right neighbours: shifted in registers, or loaded
  // where the vectors are too few to carry them (the rows then carried are never read, and the
  // compiler drops them).
  V row(std::int64_t j) const {
    if constexpr (Ops::shifts_rows)
      return at.row;
    else
      return Ops::load(at_row + j);
  }
  V row_left(std::int64_t j) const {
    if constexpr (Ops::shifts_rows)
      return left.row;
    else
      return Ops::load(at_row + j - 1);
  }
  V row_right(std::int64_t j, const Vectors& next) const {
    if constexpr (Ops::shifts_rows)
      return Ops::right(next.row, at.row);
    else
      return Ops::load(at_row + j + 1);
  }
  // Moves one vector right, to `next`: this vector becomes its left neighbours.
  void slide(const Vectors& next) {
    left = {Ops::left(next.sums, at.sums), Ops::left(next.row, at.row)};
    at = next;
  }
};

// The whole vectors of cells from j0 within [j0, j1), whose neighbours j0 - 1 to j1 are in memory
// (rows above and below included), each cell as update_inner_cell<K, B, true, true> computes it.
// Returns the first column not done (less than a vector before j1).
template <StencilKind K, class Real>
inline std::int64_t shifted_span(const Real* u0, const Real* u1, const Real* u2, const Real* v0,
                                 const Real* v1, const Real* v2, std::int64_t j0, std::int64_t j1,
                                 const Coefficients<Real>& c, Real* __restrict out_u,
                                 Real* __restrict out_v) {
  using Ops = VectorOps<Real>;
  using V = typename Ops::V;
  constexpr std::int64_t lanes = Ops::lanes;
  constexpr bool has_diagonal = folded_weights(K).diagonal != 0.0;
  const VectorReaction<Real> reaction(c);
  ShiftedRows<Real> u(u0, u1, u2, j0), v(v0, v1, v2, j0);
  std::int64_t j = j0;
  for (; j + lanes <= j1; j += lanes) {
    // The next vector, for the neighbours right of this one: beyond the last full vector only
    // its first lane, the column j1, which is in memory.
    const bool whole = j + 2 * lanes - 1 <= j1;
    const auto u_next = u.load(j + lanes, whole), v_next = v.load(j + lanes, whole);
    // step_cell(): nearest = (above + below) + (left + right), diagonal = the column sums left +
    // right; then react_folded().
    const V nearest_u = Ops::add(u.at.sums, Ops::add(u.row_left(j), u.row_right(j, u_next)));
    const V nearest_v = Ops::add(v.at.sums, Ops::add(v.row_left(j), v.row_right(j, v_next)));
    V diagonal_u{}, diagonal_v{};
    if constexpr (has_diagonal) {
      diagonal_u = Ops::add(u.left.sums, Ops::right(u_next.sums, u.at.sums));
      diagonal_v = Ops::add(v.left.sums, Ops::right(v_next.sums, v.at.sums));
    }
    reaction.template store<has_diagonal>(u.row(j), v.row(j), nearest_u, nearest_v, diagonal_u,
                                          diagonal_v, out_u + j, out_v + j);
    u.slide(u_next);
    v.slide(v_next);
  }
  return j;
}

// A row of a volume for the seven-point stencil, as shifted_span() takes a plane's: each of the
// five rows a cell reads (its own, the rows before and after it, the planes below and above it)
// loaded once per vector at the vector's own columns, the left and right neighbours its own row
// shifted by a lane. The faces are summed as step_volume_cell() sums them, lane by lane:
// ((below + above) + (before + after)) + (left + right), then react_folded(). `u` and `v` are
// volume_kernel.hpp's rows [dz + 1][dr + 1], all five in memory; columns j0 - 1 to j1 too.
// Returns the first column not done (less than a vector before j1).
template <class Real>
inline std::int64_t shifted_volume_span(const Real* const (&u)[3][3], const Real* const (&v)[3][3],
                                        std::int64_t j0, std::int64_t j1,
                                        const Coefficients<Real>& c, Real* __restrict out_u,
                                        Real* __restrict out_v) {
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
    Field(const Real* const (&rows)[3][3], std::int64_t j)
        : below(rows[0][1]), above(rows[2][1]), before(rows[1][0]), after(rows[1][2]),
          row(rows[1][1]), at(Ops::load(row + j)), left(Ops::load(row + j - 1)) {}
    V next(std::int64_t j, bool whole) const {
      return whole ? Ops::load(row + j) : Ops::load_first_lane(row + j);
    }
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
  Field fu(u, j0), fv(v, j0);
  std::int64_t j = j0;
  for (; j + lanes <= j1; j += lanes) {
    // Beyond the last full vector only the next vector's first lane, column j1, is in memory.
    const bool whole = j + 2 * lanes - 1 <= j1;
    const V u_next = fu.next(j + lanes, whole), v_next = fv.next(j + lanes, whole);
    const V nearest_u = fu.faces(j, u_next), nearest_v = fv.faces(j, v_next);
    reaction.template store<false>(fu.at, fv.at, nearest_u, nearest_v, V{}, V{}, out_u + j,
                                   out_v + j);
    fu.slide(u_next);
    fv.slide(v_next);
  }
  return j;
}

#endif  // GRAYSCOTT_SHIFTED_SPAN

}  // namespace grayscott::cpu::detail
