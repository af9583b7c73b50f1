// Slurm's topology.conf for the tree plugin (TopologyPlugin=topology/tree), from a scan: one line
// per switch of the tree, its child switches and, at the switches hosts are cabled to, the hosts
// by the names Slurm knows them by (the hostname a node description starts with), in Slurm's
// compressed host lists. Directors are written as their ASICs (each line and spine chip its own
// switch): that is the tree the packets take.
#pragma once

#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/structure.hpp"

namespace ibroute::workflow {

struct SlurmTopology {
  std::string text;                   // topology.conf
  std::vector<std::string> left_out;  // one line per host port left out, and why
  std::vector<std::string> notes;     // choices made (hosts on several leaves, switch names made unique)
  size_t switches = 0, hosts = 0;
};

// Hosts: CA ports cabled to a switch of the tree, up, with a LID. A host's name is its
// description's first word where it is a valid Slurm node name and every CA carrying it shares
// one system image GUID (one machine's HCAs); a word that unrelated CAs share ("MT4129" of
// "MT4129 ConnectX7 Mellanox Technologies") names no host: those are left out (a node-name map
// gives them names). A host with HCAs on several switches is listed under its first HCA's.
SlurmTopology slurm_topology(const fabric::Fabric& f, const fabric::FabricStructure& s);

// Slurm's topology.yaml for the block plugin (topology/block, Slurm 25.05 and later): one block
// per switch that hosts are placed under (the hosts as above), blocks of one upper switch side by
// side (Slurm aggregates neighbouring blocks), the base block size the smallest block's host count.
// `switches` counts the blocks.
SlurmTopology slurm_blocks(const fabric::Fabric& f, const fabric::FabricStructure& s);

// "node1-[001-004,007],login" from names: runs of numbered names with one prefix and width joined.
std::string compress_hostlist(std::vector<std::string> names);

}  // namespace ibroute::workflow
