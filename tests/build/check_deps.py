#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The dependency rule of docs/design.md, checked against the code.

The table between <!-- deps:begin --> and <!-- deps:end --> in docs/design.md says which modules
each module may use (directly; what those may use is allowed too). This script fails, naming the
file or the target, on:
  - a module's #include of another module's header (toru/<m>/..., toru/<m>.h) that the table does
    not allow (an upward or sideways edge), in <module>/include, src, internal, bench, fortran;
  - a quoted #include that reaches into another module's folder (its src/ above all) or an app's;
    apps/, tests/, examples/, bench/ and python/ may use any public header, but no module's src/ (tests/<m>
    may use m's own), and no app's files but their own (the tests of apps excepted);
  - a link of a module's library to a toru library of a module the table does not allow (the
    LINK_LIBRARIES and INTERFACE_LINK_LIBRARIES of every library target, written at configure time).

Usage: check_deps.py --root SRC --links FILE      (exit 1 with one line per violation)
       check_deps.py --self-test                  (a fake tree with violations: each must be found)
"""
import argparse
import os
import re
import sys
import tempfile

SOURCE_SUFFIXES = (".h", ".hpp", ".c", ".cpp", ".cc", ".cu", ".cuh", ".in")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
# Folders of the tree that are not modules but may hold code.
PROGRAM_ROOTS = ("apps", "tests", "examples", "bench", "python")
# Tests of the programs: they may include the program's own files.
TESTS_OF_APPS = ("apps", "dns", "jobs")
# Headers under toru/ that are not a module's folder: they belong to core.
CORE_TOP_LEVEL = ("config.hpp", "version.h", "core.h", "request.h", "detail")


def read_table(design):
    text = open(design, encoding="utf-8").read()
    m = re.search(r"<!-- deps:begin -->(.*?)<!-- deps:end -->", text, re.S)
    if not m:
        raise SystemExit(f"{design}: no <!-- deps:begin --> ... <!-- deps:end --> block")
    table = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] in ("module", "") or set(cells[0]) <= set("-: "):
            continue
        table[cells[0].strip("`")] = {d.strip().strip("`") for d in cells[1].split(",") if d.strip()}
    if not table:
        raise SystemExit(f"{design}: the deps block holds no '| module | may depend on |' rows")
    for m_, deps in table.items():
        for d in deps:
            if d not in table:
                raise SystemExit(f"{design}: '{m_}' may depend on '{d}', which is not a module of the table")
    return table


def closure(table):
    """Each module with everything it may reach through the modules it may use."""
    allowed = {}
    for m in table:
        seen, todo = set(), list(table[m])
        while todo:
            d = todo.pop()
            if d not in seen:
                seen.add(d)
                todo.extend(table[d])
        if m in seen:
            raise SystemExit(f"docs/design.md: the dependency table has a cycle through '{m}'")
        allowed[m] = seen
    return allowed


def header_module(path, modules):
    """The module a <toru/...> header belongs to, or None when it is not toru's."""
    parts = path.split("/")
    if parts[0] != "toru" or len(parts) < 2:
        return None
    head = parts[1]
    if head == "toru.h":
        return "*"  # every module: for programs only
    if head in CORE_TOP_LEVEL:
        return "core"
    name = head[:-2] if head.endswith(".h") else head
    return name if name in modules else None


def source_files(folder):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith("build") and not d.startswith(".")]
        for f in filenames:
            if f.endswith(SOURCE_SUFFIXES):
                yield os.path.join(dirpath, f)


class tree_index:
    """Where a quoted include's file lies when it is not next to the file including it."""

    def __init__(self, root, folders):
        self.root = root
        self.files = []
        for top in folders:
            full = os.path.join(root, top)
            if os.path.isdir(full):
                self.files.extend(os.path.relpath(p, root) for p in source_files(full))

    def find(self, include):
        suffix = "/" + include
        return [f for f in self.files if ("/" + f).endswith(suffix)]


def owner(rel):
    """(kind, name) of a path relative to the root: ('module', m), ('app', a), ('tests', t), ..."""
    parts = rel.split("/")
    if parts[0] == "apps":
        return ("app", parts[1] if len(parts) > 2 else "")
    if parts[0] == "tests":
        return ("tests", parts[1] if len(parts) > 2 else "")
    if parts[0] == "bench" and len(parts) > 1 and parts[1] == "support":
        return ("bench_support", "")
    if parts[0] in PROGRAM_ROOTS:
        return (parts[0], "")
    if len(parts) > 2 and parts[1] == "bench":
        return ("module_bench", parts[0])  # a module's benchmarks: programs beside their module
    return ("module", parts[0])


def quoted_target_allowed(src_owner, target_rel, modules):
    """Whether a file owned by src_owner may include the file at target_rel."""
    kind, name = src_owner
    t_kind, t_name = owner(target_rel)
    if t_kind == "bench_support":
        return kind != "module"  # what benchmarks share: for programs, never for a library
    if kind == "module":
        return t_kind == "module" and t_name == name
    if kind == "module_bench":
        return t_kind in ("module", "module_bench") and t_name == name
    if t_kind == "module":
        # Another module's public headers are fine; its src/ (or internal/) only for its own tests.
        in_private = target_rel.split("/")[1:2] in (["src"], ["internal"])
        if not in_private:
            return True
        return kind == "tests" and name == t_name
    if t_kind == "app":
        if kind == "app":
            return t_name in (name, "common")
        return kind == "tests" and name in TESTS_OF_APPS
    if t_kind == "module_bench":
        return kind in ("module", "module_bench") and name == t_name
    if t_kind == "tests":
        return kind == "tests"
    return True


def check_includes(root, table, allowed):
    modules = set(table)
    folders = [m for m in modules if os.path.isdir(os.path.join(root, m))] + list(PROGRAM_ROOTS)
    index = tree_index(root, folders)
    errors = []
    for top in folders:
        for path in source_files(os.path.join(root, top)):
            rel = os.path.relpath(path, root)
            src_owner = owner(rel)
            if src_owner[0] == "bench_support":
                src_owner = ("bench", "")
            text = open(path, encoding="utf-8", errors="replace").read()
            for bracket, inc in INCLUDE.findall(text):
                mod = header_module(inc, modules)
                if mod is not None:
                    if src_owner[0] != "module":
                        continue  # programs and tests may use any public header
                    m = src_owner[1]
                    if mod == "*":
                        errors.append(f"{rel}: includes <{inc}> (every module): {m} may depend on "
                                      f"{', '.join(sorted(allowed[m])) or 'nothing'}")
                    elif mod != m and mod not in allowed[m]:
                        errors.append(f"{rel}: includes {inc}, an edge {m} -> {mod} that docs/design.md's "
                                      f"table does not allow ({m} may depend on {', '.join(sorted(allowed[m])) or 'nothing'})")
                    continue
                if bracket != '"':
                    continue
                beside = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
                if os.path.isfile(os.path.join(root, beside)) and not beside.startswith(".."):
                    if not quoted_target_allowed(src_owner, beside, modules):
                        errors.append(f"{rel}: includes \"{inc}\", which is {beside}: outside what it may reach")
                    continue
                found = index.find(inc)
                if not found:
                    continue  # a system or generated header
                if any(quoted_target_allowed(src_owner, f, modules) for f in found):
                    continue
                errors.append(f"{rel}: includes \"{inc}\", found only at {', '.join(sorted(found))}: it reaches into "
                              "another module's private folder or another program (make it public API, or move the "
                              "shared part to bench/support)")
    return errors


def check_links(links_file, allowed):
    """Lines '<module> <target>: <dep module>/<dep target> ...' written at configure time."""
    errors = []
    for line in open(links_file, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head, _, deps = line.partition(":")
        module, target = head.split()
        if module not in allowed:
            errors.append(f"link: {target} belongs to '{module}', which docs/design.md's table does not list")
            continue
        for dep in deps.split():
            d_module, d_target = dep.split("/", 1)
            if d_module != module and d_module not in allowed[module]:
                errors.append(f"link: {target} -> {d_target}, an edge {module} -> {d_module} that docs/design.md's "
                              f"table does not allow ({module} may depend on "
                              f"{', '.join(sorted(allowed[module])) or 'nothing'})")
    return errors


def run(root, links, design):
    table = read_table(design)
    allowed = closure(table)
    return check_includes(root, table, allowed) + check_links(links, allowed)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    """A small tree with one violation of each kind: every one must be reported, and the same tree
    without them must pass."""
    table = ("<!-- deps:begin -->\n| module | may depend on |\n|---|---|\n| core | |\n| comm | core |\n"
             "| fft | comm |\n| swap | core |\n<!-- deps:end -->\n")
    clean = {
        "docs/design.md": table,
        "core/include/toru/core/error.hpp": "#pragma once\n",
        "core/include/toru/core.h": "\n",
        "comm/include/toru/comm/plan.hpp": '#include "toru/core/error.hpp"\n',
        "comm/src/impl.hpp": "#pragma once\n",
        "comm/src/plan.cpp": '#include "impl.hpp"\n#include "toru/comm/plan.hpp"\n#include <vector>\n',
        "fft/src/plan.cpp": '#include "toru/comm/plan.hpp"\n#include "toru/core.h"\n',
        "swap/src/graph.cpp": '#include "toru/core/error.hpp"\n',
        "apps/common/cli.hpp": "\n",
        "apps/prog/main.cpp": '#include "toru/fft/plan.hpp"\n#include "common/cli.hpp"\n',
        "tests/comm/plan_test.cpp": '#include "impl.hpp"\n#include "toru/swap/graph.hpp"\n',
        "bench/support/include/bench/order.hpp": "\n",
    }
    links_clean = "comm toru_comm: core/toru_core\nfft toru_fft: comm/toru_comm core/toru_core_mpi\n"
    violations = {
        "core/src/up.cpp": ('#include "toru/comm/plan.hpp"\n', "core -> comm"),
        "swap/src/sideways.cpp": ("#include <toru/fft/plan.hpp>\n", "swap -> fft"),
        "fft/src/reach.cpp": ('#include "impl.hpp"\n', "fft/src/reach.cpp: includes \"impl.hpp\""),
        "apps/other/main.cpp": ('#include "impl.hpp"\n', "apps/other/main.cpp: includes \"impl.hpp\""),
        "tests/fft/into_comm.cpp": ('#include "impl.hpp"\n', "tests/fft/into_comm.cpp"),
        "apps/third/main.cpp": ('#include "prog/main.cpp"\n', "apps/third/main.cpp"),
        "comm/src/all.cpp": ('#include "toru/toru.h"\n', "comm/src/all.cpp: includes <toru/toru.h>"),
    }
    links_bad = links_clean + "comm toru_comm_extra: fft/toru_fft\n"
    failures = []
    with tempfile.TemporaryDirectory() as root:
        for rel, text in clean.items():
            write(os.path.join(root, rel), text)
        write(os.path.join(root, "links.txt"), links_clean)
        errors = run(root, os.path.join(root, "links.txt"), os.path.join(root, "docs/design.md"))
        if errors:
            failures.append("the clean tree was refused:\n  " + "\n  ".join(errors))
        for rel, (text, _) in violations.items():
            write(os.path.join(root, rel), text)
        write(os.path.join(root, "links.txt"), links_bad)
        errors = run(root, os.path.join(root, "links.txt"), os.path.join(root, "docs/design.md"))
        for rel, (_, needle) in violations.items():
            if not any(needle in e and rel.split("/")[0] in e for e in errors):
                failures.append(f"not reported: {rel} ({needle}); reported:\n  " + "\n  ".join(errors))
        if not any("toru_comm_extra -> toru_fft" in e and "comm -> fft" in e for e in errors):
            failures.append("not reported: the link toru_comm_extra -> toru_fft (comm -> fft)")
        if len(errors) != len(violations) + 1:
            failures.append(f"{len(errors)} errors for {len(violations) + 1} violations:\n  " + "\n  ".join(errors))
    for f in failures:
        print("check_deps self-test:", f)
    print("check_deps self-test:", "FAILED" if failures else f"all {len(violations) + 1} violations found")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root")
    ap.add_argument("--links")
    ap.add_argument("--design")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.root or not a.links:
        ap.error("--root and --links are required")
    errors = run(a.root, a.links, a.design or os.path.join(a.root, "docs", "design.md"))
    for e in errors:
        print(e)
    print(f"check_deps: {len(errors)} violation(s) of docs/design.md's dependency table" if errors
          else "check_deps: every include and link follows docs/design.md's dependency table")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
