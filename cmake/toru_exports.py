#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""toru_exports.py OBJECTS MAP NM [KEEP]

Writes the linker version script of one shared toru library (cmake/ToruModule.cmake): the symbols
its objects define that are public API are listed by name under global, everything else is local.
Public API: C symbols toru_* (and gfortran's __toru_*_MOD_* module procedures); C++ symbols of
namespace toru with their type info, vtables and thunks, unless the demangled name (template
arguments included) lies in a detail namespace and does not match KEEP (a regex). Exceptions thrown
across libraries need their typeinfo exported; std:: and fmt:: instantiations stay local (each
library keeps its own copy). Python rather than a CMake script: a library defines ~10^5 symbols and
CMake's string lists made the step quadratic (minutes per library).
"""
import os
import re
import shutil
import subprocess
import sys


def main(objects_file, map_file, nm, keep=""):
    with open(objects_file) as f:
        objects = [line.strip() for line in f if line.strip()]
    listing = subprocess.run([nm or "nm", "-g", "-P", "--defined-only", *objects],
                             check=True, capture_output=True, text=True).stdout
    # nm -P: "<name> <type> [value size]"; object headers ("file.o:") have no type.
    names = sorted({parts[0] for parts in (line.split() for line in listing.splitlines())
                    if len(parts) >= 2 and len(parts[1]) == 1})
    cxxfilt = shutil.which("c++filt")
    if cxxfilt is None:
        sys.exit("toru_exports: c++filt not found")
    demangled = subprocess.run([cxxfilt], input="\n".join(names) + "\n", check=True,
                               capture_output=True, text=True).stdout.splitlines()
    if len(demangled) != len(names):
        sys.exit("toru_exports: c++filt returned %d names for %d" % (len(demangled), len(names)))
    c_api = re.compile(r"^(toru_|__toru_.*_MOD_)")
    cxx_api = re.compile(r"^((typeinfo|typeinfo name|vtable|VTT|construction vtable|guard variable)"
                         r" for |(non-)?virtual thunk to )?toru::")
    kept = re.compile(keep) if keep else None
    exported = [name for name, pretty in zip(names, demangled)
                if c_api.match(name)
                or (cxx_api.match(pretty)
                    and ("detail::" not in pretty or (kept and kept.search(pretty))))]
    body = "".join("    %s;\n" % name for name in exported)
    text = "{\n  global:\n%s  local:\n    *;\n};\n" % body
    # Leave the file untouched when nothing changed, so the link is not redone for nothing.
    try:
        with open(map_file) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(map_file + ".tmp", "w") as f:
        f.write(text)
    os.replace(map_file + ".tmp", map_file)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(*sys.argv[1:])
