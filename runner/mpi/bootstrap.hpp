// MPI as the runner uses it: to start (rank, size), to exchange connection data before the run
// and to gather results after it. Nothing else goes over MPI; the data plane is verbs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ibroute::runner {

class Bootstrap {
 public:
  Bootstrap(int* argc, char*** argv);  // MPI_Init (singleton when not started by a launcher)
  ~Bootstrap();                        // MPI_Finalize unless abandon() was called
  Bootstrap(const Bootstrap&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Every rank's `mine` (all the same size), concatenated in rank order.
  std::vector<uint8_t> allgather(const std::vector<uint8_t>& mine);
  // Variable-sized personal exchange: send[p] goes to rank p; returns what each rank sent here.
  std::vector<std::vector<uint8_t>> alltoallv(const std::vector<std::vector<uint8_t>>& send);
  void broadcast(void* data, size_t bytes, int root = 0);
  // The local errors of all ranks ("" = fine): a collective agreement point, so that one rank's
  // bad device stops all ranks instead of leaving them waiting.
  std::vector<std::string> agree(const std::string& local_error);
  // Point to point, for gathering from the ranks that are still alive.
  void send(int to, const std::vector<uint8_t>& data);
  std::vector<uint8_t> receive(int from);
  // A rank died: finalising would wait for it forever, so the survivors leave without
  // MPI_Finalize — but only once rank 0 is done (its destructor releases the `alive` ranks):
  // a launcher may kill the job as soon as one process leaves that way.
  void abandon(std::vector<int> alive = {}) { finalize_ = false, alive_ = std::move(alive); }

 private:
  int rank_ = 0, size_ = 1;
  bool finalize_ = true;
  std::vector<int> alive_;
};

}  // namespace ibroute::runner
