// SPDX-License-Identifier: BSD-3-Clause
// Function and file:line of call sites given as (object, offset), on rank 0 at MPI_Finalize.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace toru::tune::shim {

/// (object, offset) -> (function, "file:line"; "??:0" when unknown). An object with a symbol table
/// or debug information (in itself, or under /usr/lib/debug) goes through one addr2line per object,
/// all running at once; one with neither (Debian's stripped libraries and programs) is looked up
/// in this process (dladdr on where it is loaded): no process start per object, and an address
/// outside every exported function is "??", where addr2line names the exported symbol before it.
std::map<std::pair<std::string, std::uint64_t>, std::pair<std::string, std::string>> symbolise(
    const std::map<std::string, std::vector<std::uint64_t>>& by_object);

}  // namespace toru::tune::shim
