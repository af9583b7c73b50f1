// Files replaced whole: what ibroute writes (exports, reports, pictures, routing tables, rank
// lists, run reports) goes to a new file created exclusively beside the target — under a name
// mkstemp picks, so nothing planted at a predictable name is followed — and is renamed over it
// once complete and on disk. An interrupted command leaves the old version or the new one.
#pragma once

#include <fstream>
#include <ostream>
#include <string>
#include <string_view>

namespace ibroute::workflow {

class WholeFile {
 public:
  explicit WholeFile(std::string path);  // InputError where the temporary cannot be created
  WholeFile(const WholeFile&) = delete;
  WholeFile& operator=(const WholeFile&) = delete;
  ~WholeFile();  // not committed: the temporary removed, the target untouched
  std::ostream& out() { return out_; }
  void commit();  // flushed, synced, renamed over the target; InputError naming it

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool done_ = false;
};

void write_whole_file(const std::string& path, std::string_view text);

}  // namespace ibroute::workflow
