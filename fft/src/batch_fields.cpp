// SPDX-License-Identifier: BSD-3-Clause
#include "batch_fields.hpp"

#include <climits>

#include "pencils.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

void agree_on_batch(MPI_Comm comm, const char* call, std::array<std::int64_t, 3> n, int howmany, fields layout,
                    std::size_t real_bytes, int kind, const options3d& opts) {
  expect_intracommunicator(comm, "comm");
  int P = 0;
  check_mpi(MPI_Comm_size(comm, &P), "MPI_Comm_size");
  validate_collectively(comm, call,
                        {{"n[0]", n[0]},
                         {"n[1]", n[1]},
                         {"n[2]", n[2]},
                         {"howmany", howmany},
                         {"layout", static_cast<std::int64_t>(layout)},
                         {"precision (sizeof of the real type)", static_cast<std::int64_t>(real_bytes)},
                         {"transform kind (0 c2c, 1 r2c)", kind},
                         {"options.grid[0]", opts.grid[0]},
                         {"options.grid[1]", opts.grid[1]},
                         {"options.output", static_cast<std::int64_t>(opts.output)},
                         {"options.planner", static_cast<std::int64_t>(opts.planner)}},
                        [&] {
                          for (int a = 0; a < 3; ++a) {
                            const std::string na = fmt::format("n[{}]", a);
                            expect(n[a] >= 1 && n[a] <= INT_MAX, na.c_str(), "in [1, INT_MAX]", std::to_string(n[a]));
                          }
                          expect(howmany >= 1, "howmany", ">= 1", std::to_string(howmany));
                          expect(layout == fields::interleaved || layout == fields::planar, "layout",
                                 "fields::interleaved or fields::planar", std::to_string(static_cast<int>(layout)));
                          check_pencil_grid(opts, P);
                        });
}

fields_type::fields_type(int howmany, MPI_Datatype complex_type) {
  check_mpi(MPI_Type_contiguous(howmany, complex_type, &t_), "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&t_), "MPI_Type_commit");
}

fields_type::~fields_type() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (t_ != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(&t_);
}

}  // namespace toru::fft::detail
