// The Gray-Scott model: the one place that defines parameters, stencils, boundaries, the initial
// state and what makes a problem valid. Backends and front ends only read these types.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace grayscott {

// Every rejected input is reported through this type: one line, naming the problem.
struct InvalidInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Refusals about a path, which front ends tell apart (Python raises FileNotFoundError,
// FileExistsError, PermissionError, IsADirectoryError for them).
struct PathNotFound : InvalidInput {
  using InvalidInput::InvalidInput;
};
struct PathExists : InvalidInput {
  using InvalidInput::InvalidInput;
};
struct PathDenied : InvalidInput {
  using InvalidInput::InvalidInput;
};
struct PathIsDirectory : InvalidInput {
  using InvalidInput::InvalidInput;
};
// A file the system would not open as asked: locked by another program (Python's
// BlockingIOError), or not this user's to open so (PermissionError). Not a refusal of the request
// (InvalidInput): the same request may succeed once the lock or the rights change.
struct FileLocked : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct FileDenied : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A request whose state does not fit in the memory it would live in (Python: MemoryError).
struct OutOfMemory : InvalidInput {
  using InvalidInput::InvalidInput;
};

enum class Boundary {
  ZeroFlux,  // a neighbour outside the grid contributes nothing (as if it equalled the centre)
  Periodic,  // the grid wraps around
  Fixed,     // cells outside hold constant values: Problem::outside (u = 1, v = 0 by default)
};

// The values that cells outside the grid hold under the Fixed boundary. The default, u = 1, v = 0,
// is the unreacted medium of the C++ course and of the Numba version of the Python course; the
// CuPy and JAX versions pad their arrays with zeros for both fields (0, 0).
struct Outside {
  double u = 1.0;
  double v = 0.0;
};

enum class Precision { Single, Double };

// Built-in stencils get kernels specialised at compile time; Custom runs the generic path. The
// first four are a plane's (3x3), the last two a volume's (3x3x3).
enum class StencilKind { OonoPuri, Pretty, FivePoint, Custom, SevenPoint, NineteenPoint };

// A plane's stencil: a 3x3 weight table, row-major; the centre weight is ignored (the Laplacian is
// a sum of w_n * (x_n - x_centre) over the eight neighbours). A volume's stencils are built in:
// seven-point (the six face neighbours 1/6: the neighbours' mean minus the centre, h^2/6 times
// the Laplacian, as ADIOS2's Gray-Scott example and GrayScott.jl have it) and nineteen-point (the
// isotropic one at the same scale: faces 1/18, the twelve edges 1/36); their `weights` are unused.
struct Stencil {
  StencilKind kind = StencilKind::OonoPuri;
  std::array<double, 9> weights{};

  static Stencil oono_puri();
  static Stencil pretty();
  static Stencil five_point();
  static Stencil custom(const std::array<double, 9>& weights);
  static Stencil seven_point();
  static Stencil nineteen_point();
  // A name ("oono-puri", "pretty", "five-point", "seven-point", "nineteen-point") or nine
  // comma-separated numbers.
  static Stencil parse(std::string_view text);

  std::string name() const;  // the built-in name, or "custom"
  // A volume's stencil (seven-point, nineteen-point), for grids of depth 2 or more.
  bool three_dimensional() const {
    return kind == StencilKind::SevenPoint || kind == StencilKind::NineteenPoint;
  }

  // The range of the Laplacian's Fourier symbol L(theta) = sum_n w_n (cos(n . theta) - 1) over
  // every wave vector theta in [-pi, pi]^2 (the grid's eigenvalues under periodic boundaries),
  // computed exactly. L(0) = 0, so lowest <= 0 <= highest.
  struct SymbolRange {
    double lowest = 0, highest = 0;
  };
  SymbolRange symbol_range() const;
  // L <= 0 for every theta (up to rounding): no Fourier mode grows under diffusion alone. Explicit
  // Euler amplifies a mode with L > 0 at every step, whatever dt, so only these are stable.
  bool diffusive() const;
  // Throws InvalidInput, naming the highest Fourier symbol, unless diffusive().
  void check_diffusive() const;
  // Largest magnitude of the Laplacian's eigenvalues over all Fourier modes: for a diffusive
  // stencil, max(-L), and the explicit-Euler limit for diffusion coefficient D is
  // dt <= 2 / (D * spectral_radius()).
  double spectral_radius() const;
};

struct Parameters {
  double feed = 0.014;
  double kill = 0.054;
  double du = 0.1;
  double dv = 0.05;
  double dt = 1.0;

  // The rates alone (finite, non-negative, dt positive): throws InvalidInput naming the first bad
  // one. Problem::validate() includes it; a sweep checks each member's rates with it.
  void validate() const;
};

// A plane of rows x cols cells, or a volume of depth such planes (depth 1: the plane). A state is
// stored plane after plane, each plane row-major.
struct Grid {
  std::int64_t rows = 1080;
  std::int64_t cols = 1920;
  std::int64_t depth = 1;
  std::int64_t plane_cells() const { return rows * cols; }
  std::int64_t cells() const { return depth * rows * cols; }
  bool volume() const { return depth > 1; }
  // "1080x1920", or "64x64x64" (depth first, as the arrays' shapes)
  std::string text() const;
};

// Everything that determines the numbers a run produces.
struct Problem {
  Grid grid;
  Parameters params;
  Stencil stencil = Stencil::oono_puri();
  Boundary boundary = Boundary::ZeroFlux;
  Precision precision = Precision::Single;
  Outside outside;  // read by the Fixed boundary only

  // The largest dt explicit Euler keeps stable at the feed's rest state u = 1, v = 0, which every
  // run holds somewhere (around its start's shape, and wherever the pattern dies out): there the
  // reaction is linear, and the finest mode of u decays at rate F + Du * rho and that of v at
  // F + k + Dv * rho (rho: the stencil's spectral radius), so beyond 2 / rate rounding errors grow
  // at every step. A dt above it is refused.
  double dt_limit() const;
  // The largest dt at which every state u, v >= 0 with u + v <= 1 (the region the reaction keeps
  // its states in, the C++ course's start u = 0, v = 1 included) damps the finest mode of each
  // species: the decay rates peak at v = 1 for u (1 + F + Du * rho) and at u * v = 0 for v. Below
  // it a run stays finite; between it and dt_limit() most runs do too (the patterns' v stays far
  // below 1), and one that turns non-finite stops with this dt as the advice.
  double dt_stable_everywhere() const;
  // Both, from the stencil's spectral radius computed once (a sweep checks every member's rates).
  static double dt_limit(double spectral_radius, const Parameters& params);
  static double dt_stable_everywhere(double spectral_radius, const Parameters& params);
  // Throws InvalidInput naming the first problem found.
  void validate() const;
  // Throws InvalidInput when rates.dt exceeds dt_limit(spectral_radius, rates): a sweep's check
  // of each member's rates against the stencil's radius, computed once.
  void check_stability(double spectral_radius, const Parameters& rates) const;
};

// Which fields an image carries (what a run writes, what an engine hands back).
struct FieldSet {
  bool u = false;
  bool v = true;
  // "v", "u" or "u,v", as --fields takes it and the files' readers name it.
  std::string text() const { return u && v ? "u,v" : u ? "u" : "v"; }
};

// The initial seed: u = 1, v = 0 everywhere except this rectangle (half-open ranges, clamped to
// the grid, possibly empty), where u = 0, v = 1. The course's C++ reference seed.
struct SeedRectangle {
  std::int64_t row_begin, row_end, col_begin, col_end;
  bool contains(std::int64_t r, std::int64_t c) const {
    return r >= row_begin && r < row_end && c >= col_begin && c < col_end;
  }
};
SeedRectangle seed_rectangle(const Grid& grid);

// The shortest text that reads back as `value` exactly (0.014, not 0.014000000000000000291):
// how values are written back for a user, a file or a command line.
std::string shortest_text(double value);
// A bound to quote to a user (a stable dt): three significant digits, rounded down, so that the
// value quoted is within the bound (1.41 for 1.4159).
std::string bound_text(double value);

std::string_view to_string(Boundary b);
std::string_view to_string(Precision p);
Boundary parse_boundary(std::string_view text);
// "U,V": two finite numbers. `what` names the setting in the message ("outside"); a range's
// ("histogram-range") also as "LOW:HIGH", as render's --range is written.
Outside parse_outside(std::string_view text, std::string_view what = "outside");
std::string to_string(const Outside& outside);  // "U,V", each number's shortest exact text
Precision parse_precision(std::string_view text);

}  // namespace grayscott
