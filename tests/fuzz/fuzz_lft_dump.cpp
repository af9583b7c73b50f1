// A forwarding-table dump applied to a fixed small fabric (two switches, three CAs, LMC 1).
#include "fuzz_common.hpp"
#include "ibroute/fabric/text_import.hpp"

namespace {

constexpr const char* kTopology = R"(#
# Topology file: a small fabric for the fuzzer
#
vendid=0x2c9
devid=0xc738
sysimgguid=0x2c90300000100
switchguid=0x2c90300000100(2c90300000100)
Switch	8 "S-0002c90300000100"		# "leaf1" enhanced port 0 lid 2 lmc 0
[1]	"H-0002c90300a00010"[1](2c90300a00011) 		# "n01 HCA-1" lid 10 4xEDR
[2]	"H-0002c90300a00020"[1](2c90300a00021) 		# "n02 HCA-1" lid 12 4xEDR
[7]	"S-0002c90300000200"[7]		# "leaf2" lid 3 4xEDR

vendid=0x2c9
devid=0xc738
sysimgguid=0x2c90300000200
switchguid=0x2c90300000200(2c90300000200)
Switch	8 "S-0002c90300000200"		# "leaf2" enhanced port 0 lid 3 lmc 0
[1]	"H-0002c90300a00030"[1](2c90300a00031) 		# "n03 HCA-1" lid 14 4xEDR
[7]	"S-0002c90300000100"[7]		# "leaf1" lid 2 4xEDR

vendid=0x2c9
devid=0x1017
sysimgguid=0x2c90300a00010
caguid=0x2c90300a00010
Ca	1 "H-0002c90300a00010"		# "n01 HCA-1"
[1](2c90300a00011) 	"S-0002c90300000100"[1]		# lid 10 lmc 1 "leaf1" lid 2 4xEDR

vendid=0x2c9
devid=0x1017
sysimgguid=0x2c90300a00020
caguid=0x2c90300a00020
Ca	1 "H-0002c90300a00020"		# "n02 HCA-1"
[1](2c90300a00021) 	"S-0002c90300000100"[2]		# lid 12 lmc 1 "leaf1" lid 2 4xEDR

vendid=0x2c9
devid=0x1017
sysimgguid=0x2c90300a00030
caguid=0x2c90300a00030
Ca	1 "H-0002c90300a00030"		# "n03 HCA-1"
[1](2c90300a00031) 	"S-0002c90300000200"[1]		# lid 14 lmc 1 "leaf2" lid 3 4xEDR
)";

const ibroute::fabric::Fabric& base() {
  static const ibroute::fabric::Fabric f = ibroute::fabric::parse_ibnetdiscover(kTopology, "fuzz-topology");
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ibroute::fabric::Fabric& f = base();  // outside run(): a failure here is the target's own bug
  return ibroute::fuzz::run([&] {
    ibroute::fabric::Fabric copy = f;
    ibroute::fabric::apply_lft_dump(copy, ibroute::fuzz::text(data, size), "fuzz");
  });
}
