// What a DAQ node does with an ibroute schedule: find its own rank, then walk its transfers in the
// order it makes them. Prints them as CSV (one line per transfer):
//
//   node_transfers SCHEDULE.json [RANK | PORT_GUID | NAME | HOSTS]      (a slice needs no rank)
//
//   direction,phase,peer,peer_name,dlid,offset_s,size
//   send,0,6,node1-007,1236,0,1048576
//
// NAME as every ibroute command takes a host: node0270, "node0270 HCA-1", node0270/HCA-1, a GUID
// or LID. HOSTS, a list ("a,b" or Slurm's node[0001-0004]), prints one such table per host, each
// after a line "# rank R NAME".
//
//   node_transfers --epoch DIR PORT_GUID [START_UNIX_NS ROUND_S]
//
// follows `ibroute watch --export DIR`: the newest epoch's slice of this node, after a line
// "# epoch K from round R" — R the first round of the node's timeline (round k starts at
// START_UNIX_NS + k x ROUND_S) that starts at or after the epoch's time: every node computes the
// same R, so all switch together. "# epoch K: this node is not in it" when it was dropped.
// Exit 0, or 2 with one line on stderr when the file is not a schedule or the rank is unknown.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ibroute/peer.hpp>
#include <string>

namespace {

// The ranks `who` names: a rank number, a port GUID (0x...), or hosts as ibroute names them.
std::vector<std::uint32_t> ranks_of(const ibroute::peer::Schedule& s, const std::string& who) {
  if (who.rfind("0x", 0) == 0)
    if (const auto r = s.rank_of_port_guid(std::strtoull(who.c_str(), nullptr, 16))) return {*r};
  if (!who.empty() && who.size() < 10 && who.find_first_not_of("0123456789") == std::string::npos &&
      std::stoul(who) < s.hosts().size())
    return {static_cast<std::uint32_t>(std::stoul(who))};
  return s.ranks_of_names(who);
}

void print(const char* direction, const ibroute::peer::Schedule& s, const std::vector<ibroute::peer::Transfer>& list) {
  for (const ibroute::peer::Transfer& t : list)
    std::printf("%s,%" PRIu32 ",%" PRIu32 ",%s,%u,%.9g,%" PRIu64 "\n", direction, t.phase, t.peer,
                s.hosts()[t.peer].name.c_str(), static_cast<unsigned>(t.dlid), t.offset_s, t.size);
}

// --epoch DIR PORT_GUID [START_UNIX_NS ROUND_S]
int follow(int argc, char** argv) {
  const auto epoch = ibroute::peer::newest_epoch(argv[2]);
  if (!epoch) throw ibroute::peer::Error(std::string(argv[2]) + ": no epoch published yet");
  const auto mine = ibroute::peer::load_epoch(*epoch, std::strtoull(argv[3], nullptr, 16));
  if (!mine) {
    std::printf("# epoch %" PRIu64 ": this node is not in it\n", epoch->number);
    return 0;
  }
  const std::uint64_t round =
      argc == 6 ? ibroute::peer::handover_round(mine->epoch_from_unix_ns(), std::strtoll(argv[4], nullptr, 10),
                                                std::strtod(argv[5], nullptr))
                : 0;
  std::printf("# epoch %" PRIu64 " from round %" PRIu64 "\ndirection,phase,peer,peer_name,dlid,offset_s,size\n",
              epoch->number, round);
  print("send", *mine, mine->sends(*mine->own_rank()));
  print("receive", *mine, mine->receives(*mine->own_rank()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--epoch") {
    if (argc != 4 && argc != 6) {
      std::fprintf(stderr, "usage: %s --epoch DIR PORT_GUID [START_UNIX_NS ROUND_S]\n", argv[0]);
      return 2;
    }
    try {
      return follow(argc, argv);
    } catch (const ibroute::peer::Error& e) {
      std::fprintf(stderr, "node_transfers: %s\n", e.what());
      return 2;
    }
  }
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s SCHEDULE.json [RANK | PORT_GUID | NAME | HOSTS]   (libibroute-peer %s)\n", argv[0],
                 ibroute::peer::version());
    return 2;
  }
  try {
    const auto s = ibroute::peer::Schedule::load(argv[1]);
    std::vector<std::uint32_t> ranks;
    if (argc == 3)
      ranks = ranks_of(s, argv[2]);
    else if (s.own_rank())
      ranks = {*s.own_rank()};
    else
      throw ibroute::peer::Error("a whole schedule: name the rank (number, port GUID or host)");
    for (std::uint32_t rank : ranks) {
      if (ranks.size() > 1)
        std::printf("%s# rank %" PRIu32 " %s\n", rank == ranks.front() ? "" : "\n", rank, s.hosts()[rank].name.c_str());
      std::printf("direction,phase,peer,peer_name,dlid,offset_s,size\n");
      print("send", s, s.sends(rank));
      print("receive", s, s.receives(rank));
    }
  } catch (const ibroute::peer::Error& e) {
    std::fprintf(stderr, "node_transfers: %s\n", e.what());
    return 2;
  }
  return 0;
}
