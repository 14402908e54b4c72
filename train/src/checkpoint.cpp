// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"

namespace toru::train {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr char magic[8] = {'T', 'O', 'R', 'U', 'C', 'K', 'P', '1'};

[[noreturn]] void io_error(const fs::path& file, const std::string& what) {
  throw error(errc::io, fmt::format("{}: {}", file.string(), what));
}

// Writes bytes to a temporary file beside `target`, fsyncs it and renames it over `target`.
void write_atomically(const fs::path& target, const std::string& bytes) {
  const fs::path tmp = target.string() + fmt::format(".tmp.{}", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) io_error(tmp, fmt::format("cannot create ({})", std::strerror(errno)));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      io_error(tmp, fmt::format("write failed ({})", std::strerror(e)));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    io_error(tmp, fmt::format("flush failed ({})", std::strerror(e)));
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    io_error(target, fmt::format("rename from {} failed ({})", tmp.string(), std::strerror(e)));
  }
}

void append(std::string& out, std::span<const float> v) {
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

fs::path checkpoint_file(const fs::path& dir, std::int64_t step) {
  return dir / fmt::format("checkpoint-{}.toru", step);
}

}  // namespace

std::int64_t model_signature(std::span<const parameter_slot> slots, std::span<const std::int64_t> sample_shape,
                             int classes, std::int64_t buffer_count) {
  std::string text = fmt::format("in {}; classes {}; buffers {};", fmt::join(sample_shape, "x"), classes, buffer_count);
  for (const auto& s : slots) text += fmt::format("{} {} @{};", s.name, fmt::join(s.shape, "x"), s.offset);
  return digest(text);
}

fs::path write_checkpoint(const fs::path& dir, const checkpoint_state& s) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) io_error(dir, fmt::format("cannot create the checkpoint directory ({})", ec.message()));
  const json header{{"format", 1},
                    {"model", s.model_name},
                    {"model_signature", s.model_signature},
                    {"nranks", s.nranks},
                    {"seed", s.seed},
                    {"global_batch", s.global_batch},
                    {"step", s.step},
                    {"epoch", s.epoch},
                    {"optimizer", s.optimizer},
                    {"optimizer_steps", s.optimizer_steps},
                    {"parameters", s.parameters.size()},
                    {"buffers", s.buffers.size()},
                    {"optimizer_state", s.optimizer_state.size()},
                    {"settings", s.settings.empty() ? json::object() : json::parse(s.settings, nullptr, false)}};
  const std::string text = header.dump();
  std::string bytes(magic, sizeof magic);
  const std::uint64_t len = text.size();
  bytes.append(reinterpret_cast<const char*>(&len), sizeof len);
  bytes += text;
  append(bytes, s.parameters);
  append(bytes, s.buffers);
  append(bytes, s.optimizer_state);
  const auto crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
  bytes.append(reinterpret_cast<const char*>(&crc), sizeof crc);

  const fs::path file = checkpoint_file(dir, s.step);
  // The previous "latest" is kept as the fallback; anything older goes.
  std::int64_t previous = -1;
  try {
    const auto prev = latest_checkpoint(dir);
    std::smatch m;
    const std::string name = prev.filename().string();
    static const std::regex pattern(R"(checkpoint-(\d+)\.toru)");
    if (std::regex_match(name, m, pattern)) previous = std::stoll(m[1]);
  } catch (const error&) {
  }
  write_atomically(file, bytes);
  write_atomically(dir / "latest", file.filename().string() + "\n");
  static const std::regex pattern(R"(checkpoint-(\d+)\.toru)");
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, pattern)) continue;
    const auto step = std::stoll(m[1]);
    if (step != s.step && step != previous) fs::remove(entry.path(), ec);
  }
  return file;
}

fs::path latest_checkpoint(const fs::path& dir) {
  const fs::path pointer = dir / "latest";
  std::ifstream in(pointer);
  if (!in) io_error(pointer, "no checkpoint to resume from (the file naming the latest checkpoint is missing)");
  std::string name;
  std::getline(in, name);
  if (name.empty() || name.find('/') != std::string::npos) io_error(pointer, "malformed (expected a file name)");
  return dir / name;
}

checkpoint_state read_checkpoint(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) io_error(file, "cannot open the checkpoint");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof magic + 8 + 4 || std::memcmp(bytes.data(), magic, sizeof magic) != 0)
    io_error(file, "not a toru-train checkpoint (bad magic)");
  std::uint32_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  const auto crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size() - 4)));
  if (crc != stored) io_error(file, "corrupt checkpoint (CRC mismatch)");
  std::uint64_t len = 0;
  std::memcpy(&len, bytes.data() + sizeof magic, 8);
  if (len > bytes.size() - sizeof magic - 12) io_error(file, "corrupt checkpoint (header length)");
  const json h = json::parse(bytes.substr(sizeof magic + 8, len), nullptr, false);
  if (h.is_discarded() || !h.is_object()) io_error(file, "corrupt checkpoint (header is not JSON)");
  checkpoint_state s;
  try {
    if (h.at("format").get<int>() != 1) io_error(file, "unknown checkpoint format version");
    s.model_name = h.at("model").get<std::string>();
    s.model_signature = h.at("model_signature").get<std::int64_t>();
    s.nranks = h.at("nranks").get<int>();
    s.seed = h.at("seed").get<std::uint64_t>();
    s.global_batch = h.at("global_batch").get<std::int64_t>();
    s.step = h.at("step").get<std::int64_t>();
    s.epoch = h.at("epoch").get<std::int64_t>();
    s.optimizer = h.at("optimizer").get<std::string>();
    s.optimizer_steps = h.at("optimizer_steps").get<std::int64_t>();
    s.settings = h.at("settings").dump();
    const auto np = h.at("parameters").get<std::size_t>(), nb = h.at("buffers").get<std::size_t>(),
               no = h.at("optimizer_state").get<std::size_t>();
    if (sizeof magic + 8 + len + 4 * (np + nb + no) + 4 != bytes.size())
      io_error(file, "corrupt checkpoint (size does not match its header)");
    const char* p = bytes.data() + sizeof magic + 8 + len;
    auto take = [&](std::vector<float>& v, std::size_t n) {
      v.resize(n);
      if (n > 0) std::memcpy(v.data(), p, n * sizeof(float));  // an empty vector's data() may be null
      p += n * sizeof(float);
    };
    take(s.parameters, np);
    take(s.buffers, nb);
    take(s.optimizer_state, no);
  } catch (const nlohmann::json::exception& e) {
    io_error(file, fmt::format("corrupt checkpoint header ({})", e.what()));
  }
  return s;
}

void check_compatible(const checkpoint_state& found, const checkpoint_state& expected, const fs::path& file) {
  auto differ = [&](std::string_view what, const auto& got, const auto& want) {
    throw error(errc::mismatch,
                fmt::format("{}: checkpoint of {} {}, this run has {}: cannot resume", file.string(), what, got, want));
  };
  if (found.model_name != expected.model_name) differ("model", found.model_name, expected.model_name);
  if (found.model_signature != expected.model_signature)
    differ("model signature", found.model_signature, expected.model_signature);
  if (found.nranks != expected.nranks) differ("rank count", found.nranks, expected.nranks);
  if (found.global_batch != expected.global_batch) differ("global batch", found.global_batch, expected.global_batch);
  if (found.optimizer != expected.optimizer) differ("optimizer", found.optimizer, expected.optimizer);
  if (found.parameters.size() != expected.parameters.size())
    differ("parameter count", found.parameters.size(), expected.parameters.size());
  if (found.buffers.size() != expected.buffers.size())
    differ("buffer count", found.buffers.size(), expected.buffers.size());
  if (found.optimizer_state.size() != expected.optimizer_state.size())
    differ("optimizer state size", found.optimizer_state.size(), expected.optimizer_state.size());
}

}  // namespace toru::train
