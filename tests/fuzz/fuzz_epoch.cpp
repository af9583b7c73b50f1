// What a peer reads of an epoch (libibroute-peer's load_epoch, docs/epochs.md): the host table and
// a node's slice, written from the input into an epoch directory. The input is the host table,
// a line "--8<--", then the slice. A refusal is the library's Error (one line), never a crash, and
// a slice it returns is the one asked for: its own rank, and that rank's port GUID.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_common.hpp"
#include "ibroute/peer.hpp"
#include "ibroute/schedule/format.hpp"

namespace {

const std::filesystem::path& epoch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d =
        std::filesystem::temp_directory_path() / ("ibroute-fuzz-epoch-" + std::to_string(::getpid())) / "epoch-000001";
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

void write(const std::filesystem::path& p, std::string_view text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ibroute;
  return fuzz::run([&] {
    const std::string_view in = fuzz::text(data, size);
    const size_t cut = in.find("\n--8<--\n");
    const std::string_view table = cut == std::string_view::npos ? in : in.substr(0, cut);
    const std::string_view slice = cut == std::string_view::npos ? std::string_view() : in.substr(cut + 8);
    write(epoch_dir() / schedule::kHostsFile, table);
    write(epoch_dir() / "rank00000-fuzz.json", slice);
    // The port asked for: rank 0's as the table gives it, where it reads.
    uint64_t guid = 0x0002c90300a00011;
    try {
      const schedule::ScheduleDoc t = schedule::hosts_file_from_json(table);
      if (!t.identities.empty()) guid = t.identities[0].port_guid;
    } catch (const InputError&) {
    }
    try {
      const std::optional<peer::Schedule> s = peer::load_epoch({1, epoch_dir().string()}, guid);
      if (s && (!s->own_rank() || *s->own_rank() != 0 || s->epoch() != 1)) {
        std::fprintf(stderr, "fuzz: load_epoch returned a slice that is not rank 0's of epoch 1\n");
        std::abort();
      }
    } catch (const peer::Error& e) {
      for (const char* p = e.what(); *p; ++p)
        if (*p == '\n') {
          std::fprintf(stderr, "fuzz: a peer Error of more than one line: %s\n", e.what());
          std::abort();
        }
    }
  });
}
