// SPDX-License-Identifier: BSD-3-Clause
#include "symbols.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>

namespace toru::tune::shim {
namespace {

// The separate debug file of `obj` that addr2line would find: by build id, or by path under
// /usr/lib/debug (Debian's -dbgsym packages install the first).
bool debug_file(const std::string& obj, std::ifstream& f, const std::vector<ElfW(Shdr)>& sh, const std::string& names) {
  for (const auto& s : sh) {
    if (s.sh_name >= names.size() || std::strcmp(names.c_str() + s.sh_name, ".note.gnu.build-id") != 0) continue;
    std::string note(s.sh_size, '\0');
    f.seekg(static_cast<std::streamoff>(s.sh_offset));
    if (note.size() < sizeof(ElfW(Nhdr)) || !f.read(note.data(), static_cast<std::streamsize>(note.size()))) break;
    ElfW(Nhdr) nh;
    std::memcpy(&nh, note.data(), sizeof nh);
    const std::size_t desc = sizeof nh + ((nh.n_namesz + 3) & ~3u);
    if (nh.n_descsz < 2 || desc + nh.n_descsz > note.size()) break;
    std::string hex;
    for (std::size_t i = 0; i < nh.n_descsz; ++i)
      hex += fmt::format("{:02x}", static_cast<unsigned char>(note[desc + i]));
    std::error_code ec;
    if (std::filesystem::exists(fmt::format("/usr/lib/debug/.build-id/{}/{}.debug", hex.substr(0, 2), hex.substr(2)),
                                ec))
      return true;
  }
  std::error_code ec;
  const auto real = std::filesystem::canonical(obj, ec);
  return !ec && std::filesystem::exists("/usr/lib/debug" + real.string(), ec);
}

// Whether addr2line could know more than the dynamic symbols: a .symtab or DWARF in the file or
// in a separate debug file.
bool needs_addr2line(const std::string& obj) {
  std::ifstream f(obj, std::ios::binary);
  ElfW(Ehdr) eh{};
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shstrndx >= eh.e_shnum)
    return true;  // not what we can read: leave it to addr2line
  std::vector<ElfW(Shdr)> sh(eh.e_shnum);
  f.seekg(static_cast<std::streamoff>(eh.e_shoff));
  if (!f.read(reinterpret_cast<char*>(sh.data()), static_cast<std::streamsize>(sh.size() * sizeof(ElfW(Shdr)))))
    return true;
  const ElfW(Shdr)& names = sh[eh.e_shstrndx];
  std::string strtab(names.sh_size, '\0');
  f.seekg(static_cast<std::streamoff>(names.sh_offset));
  if (!f.read(strtab.data(), static_cast<std::streamsize>(strtab.size()))) return true;
  for (const auto& s : sh) {
    if (s.sh_name >= strtab.size()) continue;
    const char* n = strtab.c_str() + s.sh_name;
    if (std::strcmp(n, ".symtab") == 0 || std::strncmp(n, ".debug_", 7) == 0 || std::strncmp(n, ".zdebug_", 8) == 0)
      return true;
  }
  return debug_file(obj, f, sh, strtab);
}

// Load bases of this process's objects by path (the program under its /proc/self/exe path).
std::map<std::string, std::uintptr_t> load_bases() {
  std::map<std::string, std::uintptr_t> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& m = *static_cast<std::map<std::string, std::uintptr_t>*>(data);
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.empty()) {
          std::error_code ec;
          name = std::filesystem::read_symlink("/proc/self/exe", ec).string();
        }
        std::error_code ec;
        const auto canonical = std::filesystem::weakly_canonical(name, ec);
        m.emplace(ec ? name : canonical.string(), info->dlpi_addr);
        m.emplace(name, info->dlpi_addr);
        return 0;
      },
      &out);
  return out;
}

std::string demangle(const char* s) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(s, nullptr, nullptr, &status), std::free);
  return status == 0 && d ? d.get() : s;
}

}  // namespace

std::map<std::pair<std::string, std::uint64_t>, std::pair<std::string, std::string>> symbolise(
    const std::map<std::string, std::vector<std::uint64_t>>& by_object) {
  std::map<std::pair<std::string, std::uint64_t>, std::pair<std::string, std::string>> out;
  const auto bases = load_bases();
  std::vector<std::pair<const std::string*, FILE*>> pending;
  for (const auto& [obj, addrs] : by_object) {
    if (obj == "?" || obj.empty() || obj.find('\'') != std::string::npos) {
      for (auto a : addrs) out[{obj, a}] = {"??", "??:0"};
      continue;
    }
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(obj, ec).string();
    auto base = bases.find(ec ? obj : canonical);
    if (base == bases.end()) base = bases.find(obj);
    if (base != bases.end() && !needs_addr2line(obj)) {
      // The offsets are what addr2line takes: from the load base (absolute for a fixed-address
      // program, whose base is 0).
      for (auto a : addrs) {
        Dl_info info{};
        const bool hit = dladdr(reinterpret_cast<void*>(base->second + a), &info) && info.dli_sname;
        out[{obj, a}] = {hit ? demangle(info.dli_sname) : "??", "??:0"};
      }
      continue;
    }
    std::string cmd = fmt::format("addr2line -C -f -e '{}'", obj);
    for (auto a : addrs) cmd += fmt::format(" 0x{:x}", a);
    cmd += " 2>/dev/null";
    pending.emplace_back(&obj, popen(cmd.c_str(), "r"));
  }
  // Every addr2line started before the first is read: they run side by side.
  for (auto [obj, p] : pending) {
    for (auto a : by_object.at(*obj)) {
      std::string fn = "??", loc = "??:0";
      char buf[4096];
      if (p && fgets(buf, sizeof buf, p)) {
        fn = buf;
        fn.erase(fn.find_last_not_of("\r\n") + 1);
        if (fgets(buf, sizeof buf, p)) {
          loc = buf;
          loc.erase(loc.find_last_not_of("\r\n") + 1);
          if (auto d = loc.find(" (discriminator"); d != std::string::npos) loc.erase(d);
        }
      }
      out[{*obj, a}] = {fn, loc};
    }
    if (p) pclose(p);
  }
  return out;
}

}  // namespace toru::tune::shim
