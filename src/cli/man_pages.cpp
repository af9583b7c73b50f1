#include "man_pages.hpp"

#include <fstream>
#include <sstream>

#include "ibroute/fabric/error.hpp"

namespace ibroute::cli {

namespace {

// Text as roff reads it: backslashes escaped, a line never taken for a request, dashes as such.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

// What the user sees of the options: visible ones (hidden test hooks have no group).
std::vector<const CLI::Option*> visible(const CLI::App& app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* o : app.get_options())
    if (!o->get_group().empty()) out.push_back(o);
  return out;
}

std::string option_line(const CLI::Option* o) {
  std::string names = o->get_positional() && o->get_lnames().empty() && o->get_snames().empty()
                          ? o->get_name(true)
                          : o->get_name(false, true);
  std::string line = "\\fB" + roff(names) + "\\fR";
  if (o->get_type_size() != 0 && !o->get_type_name().empty()) line += " \\fI" + roff(o->get_type_name()) + "\\fR";
  return line;
}

std::string page(const CLI::App& cmd, const std::string& name, const std::string& version,
                 const std::string& exit_codes, const std::vector<std::string>& see_also) {
  std::ostringstream o;
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  o << ".TH " << roff(upper) << " 1 \"\" \"ibroute " << version << "\" \"ibroute manual\"\n";
  o << ".SH NAME\n" << roff(name) << " \\- " << roff(cmd.get_description()) << "\n";
  o << ".SH SYNOPSIS\n.B " << roff(name == "ibroute" ? "ibroute" : "ibroute " + name.substr(8)) << "\n";
  o << (name == "ibroute" ? "[\\fB\\-\\-version\\fR] [\\fB\\-\\-help\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n"
                          : "[\\fIOPTIONS\\fR]\n");
  for (const CLI::Option* p : visible(cmd))
    if (p->get_positional() && p->get_lnames().empty() && p->get_snames().empty())
      o << "\\fI" << roff(p->get_name(true)) << "\\fR\n";
  std::string footer = cmd.get_footer(), examples;
  if (const size_t at = footer.find(kExamplesHeading); at != std::string::npos) {
    examples = footer.substr(at + std::string(kExamplesHeading).size() + 1);
    footer = footer.substr(0, at);
    while (!footer.empty() && footer.back() == '\n') footer.pop_back();
  }
  o << ".SH DESCRIPTION\n" << roff(cmd.get_description()) << "\n";
  if (!footer.empty() && footer != exit_codes) o << ".PP\n.nf\n" << roff(footer) << "\n.fi\n";
  if (name == "ibroute") {
    o << ".SH COMMANDS\n";
    for (const CLI::App* sub : cmd.get_subcommands({}))
      o << ".TP\n\\fB" << roff(sub->get_name()) << "\\fR\n"
        << roff(sub->get_description()) << " See \\fBibroute\\-" << roff(sub->get_name()) << "\\fR(1).\n";
  }
  o << ".SH OPTIONS\n";
  for (const CLI::Option* opt : visible(cmd)) {
    o << ".TP\n" << option_line(opt) << "\n" << roff(opt->get_description());
    if (!opt->get_default_str().empty()) o << " (default: " << roff(opt->get_default_str()) << ")";
    if (opt->get_required()) o << " (required)";
    o << "\n";
  }
  o << ".SH EXIT STATUS\n.nf\n" << roff(exit_codes) << "\n.fi\n";
  if (!examples.empty()) o << ".SH EXAMPLES\n.nf\n" << roff(examples) << "\n.fi\n";
  o << ".SH FILES\n.TP\n\\fIibroute.db\\fR\nThe fabric database (\\fB\\-\\-db\\fR): scans, routes, schedules and runs, "
       "in SQLite; "
       "its schema in /usr/share/doc/ibroute/database.md. Commands that only read it never change it.\n"
       ".TP\n\\fI/usr/share/doc/ibroute/\\fR\nThe formats: schedule files (schedule\\-format.md), run reports "
       "(run\\-report.md), "
       "acceptance expectations (acceptance.md), imported dumps (import\\-formats.md).\n"
       ".TP\n\\fI/usr/share/doc/ibroute/examples/\\fR\nFabrics to import and an expectation file.\n";
  o << ".SH SEE ALSO\n";
  for (size_t i = 0; i < see_also.size(); ++i) o << (i ? ",\n" : "") << "\\fB" << roff(see_also[i]) << "\\fR(1)";
  o << "\n";
  return o.str();
}

}  // namespace

void write_man_pages(const CLI::App& app, const std::string& dir, const std::string& version) {
  const std::string exit_codes = app.get_footer();
  std::vector<std::string> all{"ibroute"};
  for (const CLI::App* sub : app.get_subcommands({})) all.push_back("ibroute-" + sub->get_name());
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream f(dir + "/" + name + ".1");
    if (!(f << text)) throw std::runtime_error("cannot write " + dir + "/" + name + ".1");
  };
  std::vector<std::string> others(all.begin() + 1, all.end());
  others.insert(others.end(), {"ibnetdiscover", "opensm"});
  write("ibroute", page(app, "ibroute", version, exit_codes, others));
  for (const CLI::App* sub : app.get_subcommands({})) {
    std::vector<std::string> see{"ibroute"};
    write("ibroute-" + sub->get_name(), page(*sub, "ibroute-" + sub->get_name(), version, exit_codes, see));
  }
}

std::string bash_completion(const CLI::App& app) {
  std::ostringstream o;
  o << "# bash completion for ibroute (generated from its options; installed by cmake --install)\n"
       "_ibroute() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} opts=\"\"\n"
       "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
       "    COMPREPLY=($(compgen -W \"";
  for (const CLI::App* sub : app.get_subcommands({})) o << sub->get_name() << " ";
  o << "--help --version\" -- \"$cur\"))\n    return\n  fi\n  case \"${COMP_WORDS[1]}\" in\n";
  for (const CLI::App* sub : app.get_subcommands({})) {
    o << "    " << sub->get_name() << ") opts=\"";
    for (const CLI::Option* opt : visible(*sub)) {
      for (const std::string& s : opt->get_snames()) o << "-" << s << " ";
      for (const std::string& l : opt->get_lnames()) o << "--" << l << " ";
    }
    o << "\" ;;\n";
  }
  o << "  esac\n"
       "  if [[ \"$cur\" == -* ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
       "  else\n"
       "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "  fi\n"
       "}\n"
       "complete -o filenames -F _ibroute ibroute\n";
  return o.str();
}

}  // namespace ibroute::cli
