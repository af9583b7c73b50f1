// SVG rendering through Graphviz's own library rather than a `dot` subprocess.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <memory>
#include <stdexcept>

#include "ibroute/fabric/dot.hpp"

namespace ibroute::fabric {

std::string render_svg(const std::string& dot) {
  std::unique_ptr<GVC_t, decltype(&gvFreeContext)> gvc(gvContext(), &gvFreeContext);
  if (!gvc) throw std::runtime_error("graphviz: cannot create a context");
  std::unique_ptr<Agraph_t, decltype(&agclose)> g(agmemread(dot.c_str()), &agclose);
  if (!g) throw std::runtime_error("graphviz: cannot parse the generated graph");
  if (gvLayout(gvc.get(), g.get(), "dot") != 0) throw std::runtime_error("graphviz: layout failed");
  char* data = nullptr;
  unsigned int len = 0;
  int rc = gvRenderData(gvc.get(), g.get(), "svg", &data, &len);
  std::string out = rc == 0 && data ? std::string(data, len) : std::string();
  gvFreeRenderData(data);
  gvFreeLayout(gvc.get(), g.get());
  if (out.empty()) throw std::runtime_error("graphviz: SVG rendering failed");
  return out;
}

}  // namespace ibroute::fabric
