// SPDX-License-Identifier: BSD-3-Clause
#include "dns/checkpoint.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::dns {
namespace {

using json = nlohmann::json;

// Complex elements of one component in the file.
std::int64_t component_count(std::int64_t n) { return n * n * (n / 2 + 1); }

// The file type of this rank's modes: a subarray of the global n x n x (n/2+1) complex array.
// Empty boxes (possible on some ranks of some decompositions) still take part in collective I/O.
MPI_Datatype box_type(const spectral_grid& grid) {
  const auto& b = grid.spec();
  const std::int64_t n = grid.n();
  const int sizes[3] = {static_cast<int>(n), static_cast<int>(n), static_cast<int>(n / 2 + 1)};
  int sub[3], start[3];
  for (int a = 0; a < 3; ++a) {
    sub[a] = static_cast<int>(b.size[a]);
    start[a] = static_cast<int>(b.low[a]);
  }
  MPI_Datatype type;
  if (b.count() == 0) {
    check_mpi(MPI_Type_contiguous(0, MPI_C_DOUBLE_COMPLEX, &type), "MPI_Type_contiguous");
  } else {
    check_mpi(MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_C_DOUBLE_COMPLEX, &type),
              "MPI_Type_create_subarray");
  }
  check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  return type;
}

// The local modes in natural order (axis 0, 1, 2) from / to the spectral box's memory order.
std::vector<cpx> to_natural(const spectral_grid& grid, const scalar_field& f) {
  const auto& b = grid.spec();
  std::vector<cpx> out(static_cast<std::size_t>(b.count()));
  for_box(b, [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
    const std::int64_t i = ((g[0] - b.low[0]) * b.size[1] + (g[1] - b.low[1])) * b.size[2] + (g[2] - b.low[2]);
    out[static_cast<std::size_t>(i)] = f[static_cast<std::size_t>(at)];
  });
  return out;
}
void from_natural(const spectral_grid& grid, const std::vector<cpx>& in, scalar_field& f) {
  const auto& b = grid.spec();
  std::fill(f.begin(), f.end(), cpx{});
  for_box(b, [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
    const std::int64_t i = ((g[0] - b.low[0]) * b.size[1] + (g[1] - b.low[1])) * b.size[2] + (g[2] - b.low[2]);
    f[static_cast<std::size_t>(at)] = in[static_cast<std::size_t>(i)];
  });
}

std::string mpi_io_error(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<std::size_t>(len));
}

// Every rank learns whether an MPI-IO call failed anywhere (MPI-IO errors need not be collective).
void agree_io(MPI_Comm comm, int rc, const std::string& what) {
  validate_collectively(comm, [&] {
    if (rc != MPI_SUCCESS) throw error(errc::io, fmt::format("{}: {}", what, mpi_io_error(rc)));
  });
}

json header_json(const checkpoint_header& h) {
  return json{{"magic", "toru-dns-checkpoint"},
              {"version", checkpoint_version},
              {"n", h.n},
              {"t", h.t},
              {"step", h.step},
              {"dt", h.dt},
              {"re", h.re},
              {"nu", h.nu},
              {"forcing", h.forcing},
              {"scheme", h.scheme},
              {"layout", "u_hat = FFT(u)/n^3: components x,y,z; each [n][n][n/2+1] complex<double>, row-major"},
              {"data_offset", checkpoint_header_bytes},
              {"data_bytes", 3 * component_count(h.n) * 16},
              {"digest", fmt::format("{:016x}", h.digest)}};
}

// Rank 0 reads and checks the header; every rank gets the same header or the same error.
checkpoint_header read_header(MPI_Comm comm, const std::string& path, std::int64_t expect_n) {
  std::string text;
  validate_collectively(comm, [&] {
    if (mpi_rank(comm) != 0) return;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw error(errc::io, fmt::format("--restart: no checkpoint file '{}'", path));
    std::ifstream in(path, std::ios::binary);
    std::string buf(static_cast<std::size_t>(checkpoint_header_bytes), '\0');
    in.read(buf.data(), checkpoint_header_bytes);
    if (in.gcount() != checkpoint_header_bytes)
      throw error(errc::io,
                  fmt::format("--restart: '{}' is not a toru-dns checkpoint (shorter than its header)", path));
    json h = json::parse(buf.substr(0, buf.find('\n')), nullptr, false);
    if (h.is_discarded() || !h.is_object() || h.value("magic", "") != "toru-dns-checkpoint")
      throw error(errc::io, fmt::format("--restart: '{}' is not a toru-dns checkpoint (no toru-dns header)", path));
    if (h.value("version", 0) != checkpoint_version)
      throw error(errc::io, fmt::format("--restart: '{}' has checkpoint version {}, expected {}", path,
                                        h.value("version", 0), checkpoint_version));
    const std::int64_t n = h.value("n", std::int64_t{0});
    if (expect_n > 0 && n != expect_n)
      throw error(errc::mismatch, fmt::format("--restart: '{}' holds a {}^3 field, expected {}^3 (--n {})", path, n,
                                              expect_n, expect_n));
    const auto size = std::filesystem::file_size(path, ec);
    const auto want = static_cast<std::uintmax_t>(checkpoint_header_bytes + 3 * component_count(n) * 16);
    if (ec || size != want)
      throw error(errc::io, fmt::format("--restart: '{}' has {} bytes, expected {} for n = {} (truncated?)", path,
                                        ec ? 0 : size, want, n));
    text = h.dump();
  });
  int len = static_cast<int>(text.size());
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, 0, comm), "MPI_Bcast");
  text.resize(static_cast<std::size_t>(len));
  check_mpi(MPI_Bcast(text.data(), len, MPI_CHAR, 0, comm), "MPI_Bcast");
  const json h = json::parse(text);
  checkpoint_header out;
  out.n = h.at("n").get<std::int64_t>();
  out.t = h.at("t").get<double>();
  out.step = h.at("step").get<std::int64_t>();
  out.dt = h.at("dt").get<double>();
  out.re = h.at("re").get<double>();
  out.nu = h.at("nu").get<double>();
  out.forcing = h.at("forcing").get<double>();
  out.scheme = h.at("scheme").get<std::string>();
  out.digest = std::stoull(h.at("digest").get<std::string>(), nullptr, 16);
  return out;
}

}  // namespace

void write_checkpoint(const spectral_grid& grid, const vector_field& u, checkpoint_header h, const std::string& path) {
  MPI_Comm comm = grid.comm();
  h.n = grid.n();
  h.digest = grid.digest(u);
  const std::string tmp = path + ".tmp";
  MPI_File file;
  int rc = MPI_File_open(comm, tmp.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
  agree_io(comm, rc, fmt::format("checkpoint '{}': cannot create", tmp));
  // Every rank makes every collective call, whatever failed before; the first error is agreed on
  // at the end.
  auto keep = [&rc](int r) {
    if (rc == MPI_SUCCESS) rc = r;
  };
  keep(MPI_File_set_size(file, 0));
  MPI_Datatype type = box_type(grid);
  if (mpi_rank(comm) == 0) {
    std::string text = header_json(h).dump();
    text.resize(static_cast<std::size_t>(checkpoint_header_bytes - 1), ' ');
    text.push_back('\n');
    keep(MPI_File_write_at(file, 0, text.data(), static_cast<int>(text.size()), MPI_CHAR, MPI_STATUS_IGNORE));
  }
  const std::int64_t count = grid.spec().count();
  for (int c = 0; c < 3; ++c) {
    const auto data = to_natural(grid, u[c]);
    const MPI_Offset disp = checkpoint_header_bytes + c * component_count(grid.n()) * 16;
    keep(MPI_File_set_view(file, disp, MPI_C_DOUBLE_COMPLEX, type, "native", MPI_INFO_NULL));
    keep(MPI_File_write_all(file, data.data(), static_cast<int>(count), MPI_C_DOUBLE_COMPLEX, MPI_STATUS_IGNORE));
  }
  keep(MPI_File_sync(file));
  MPI_Type_free(&type);
  keep(MPI_File_close(&file));
  agree_io(comm, rc, fmt::format("checkpoint '{}': write failed", tmp));
  validate_collectively(comm, [&] {
    if (mpi_rank(comm) != 0) return;
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw error(errc::io, fmt::format("checkpoint '{}': rename from '{}' failed: {}", path, tmp, ec.message()));
  });
}

checkpoint_header peek_checkpoint(MPI_Comm comm, const std::string& path, std::int64_t expect_n) {
  return read_header(comm, path, expect_n);
}

checkpoint_header read_checkpoint(const spectral_grid& grid, vector_field& u, const std::string& path) {
  MPI_Comm comm = grid.comm();
  const checkpoint_header h = read_header(comm, path, grid.n());
  MPI_File file;
  int rc = MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  agree_io(comm, rc, fmt::format("--restart: cannot open '{}'", path));
  auto keep = [&rc](int r) {
    if (rc == MPI_SUCCESS) rc = r;
  };
  MPI_Datatype type = box_type(grid);
  const std::int64_t count = grid.spec().count();
  vector_field v = grid.make_vector();
  for (int c = 0; c < 3; ++c) {
    std::vector<cpx> data(static_cast<std::size_t>(count));
    const MPI_Offset disp = checkpoint_header_bytes + c * component_count(grid.n()) * 16;
    keep(MPI_File_set_view(file, disp, MPI_C_DOUBLE_COMPLEX, type, "native", MPI_INFO_NULL));
    keep(MPI_File_read_all(file, data.data(), static_cast<int>(count), MPI_C_DOUBLE_COMPLEX, MPI_STATUS_IGNORE));
    from_natural(grid, data, v[c]);
  }
  MPI_Type_free(&type);
  keep(MPI_File_close(&file));
  agree_io(comm, rc, fmt::format("--restart: reading '{}' failed", path));
  const std::uint64_t digest = grid.digest(v);  // collective: every rank agrees
  if (digest != h.digest)
    throw error(errc::io, fmt::format("--restart: '{}' is corrupted (digest {:016x}, header says {:016x})", path,
                                      digest, h.digest));
  u = std::move(v);
  return h;
}

}  // namespace toru::dns
