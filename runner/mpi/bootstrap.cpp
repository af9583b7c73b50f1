#include "bootstrap.hpp"

#define OMPI_SKIP_MPICXX 1  // the C API only: no C++ bindings to link
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstring>
#include <stdexcept>

namespace ibroute::runner {

namespace {
void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}
}  // namespace

Bootstrap::Bootstrap(int* argc, char*** argv) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) check(MPI_Init(argc, argv), "MPI_Init");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Bootstrap::~Bootstrap() {
  if (finalize_) {
    MPI_Finalize();
    return;
  }
  char bye = 0;
  if (rank_ == 0)
    for (int p : alive_) MPI_Send(&bye, 1, MPI_CHAR, p, 3, MPI_COMM_WORLD);
  else
    MPI_Recv(&bye, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

std::vector<uint8_t> Bootstrap::allgather(const std::vector<uint8_t>& mine) {
  std::vector<uint8_t> all(mine.size() * static_cast<size_t>(size_));
  check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), static_cast<int>(mine.size()),
                      MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Allgather");
  return all;
}

std::vector<std::vector<uint8_t>> Bootstrap::alltoallv(const std::vector<std::vector<uint8_t>>& send) {
  std::vector<int> scount(static_cast<size_t>(size_)), rcount(static_cast<size_t>(size_)),
      sdispl(static_cast<size_t>(size_)), rdispl(static_cast<size_t>(size_));
  std::vector<uint8_t> sbuf;
  for (int p = 0; p < size_; ++p) {
    sdispl[p] = static_cast<int>(sbuf.size());
    scount[p] = static_cast<int>(send[p].size());
    sbuf.insert(sbuf.end(), send[p].begin(), send[p].end());
  }
  check(MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
  int total = 0;
  for (int p = 0; p < size_; ++p) rdispl[p] = total, total += rcount[p];
  std::vector<uint8_t> rbuf(static_cast<size_t>(total));
  check(MPI_Alltoallv(sbuf.data(), scount.data(), sdispl.data(), MPI_BYTE, rbuf.data(), rcount.data(), rdispl.data(),
                      MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Alltoallv");
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(size_));
  for (int p = 0; p < size_; ++p) out[p].assign(rbuf.begin() + rdispl[p], rbuf.begin() + rdispl[p] + rcount[p]);
  return out;
}

void Bootstrap::broadcast(void* data, size_t bytes, int root) {
  check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

std::vector<std::string> Bootstrap::agree(const std::string& local_error) {
  constexpr size_t kLen = 512;
  std::vector<uint8_t> mine(kLen, 0);
  std::memcpy(mine.data(), local_error.data(), std::min(local_error.size(), kLen - 1));
  std::vector<uint8_t> all = allgather(mine);
  std::vector<std::string> out;
  for (int p = 0; p < size_; ++p)
    out.emplace_back(reinterpret_cast<const char*>(all.data() + static_cast<size_t>(p) * kLen));
  return out;
}

void Bootstrap::send(int to, const std::vector<uint8_t>& data) {
  uint64_t n = data.size();
  check(MPI_Send(&n, 1, MPI_UINT64_T, to, 1, MPI_COMM_WORLD), "MPI_Send");
  if (n) check(MPI_Send(data.data(), static_cast<int>(n), MPI_BYTE, to, 2, MPI_COMM_WORLD), "MPI_Send");
}

std::vector<uint8_t> Bootstrap::receive(int from) {
  uint64_t n = 0;
  check(MPI_Recv(&n, 1, MPI_UINT64_T, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  std::vector<uint8_t> data(n);
  if (n)
    check(MPI_Recv(data.data(), static_cast<int>(n), MPI_BYTE, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  return data;
}

}  // namespace ibroute::runner
