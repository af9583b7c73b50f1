// `ibroute exporter`: its options (parsed by `ibroute`) and its server, which lives in the sibling
// executable `ibroute-exporter`: only that one links the HTTP library (cpp-httplib, with OpenSSL,
// zlib and brotli behind it), whose loading would double the start of every other command.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace ibroute::cli {

struct ExporterOptions {
  std::string db;
  std::optional<int64_t> scan;
  std::string listen = "127.0.0.1:9683";
  double min_interval_s = 5, scrape_timeout_s = 8;
  std::string ca;
  int port = 0, timeout_ms = 0, retries = 0, mads = 32;
};

std::function<int()> setup_exporter_options(CLI::App& app, std::function<int(const ExporterOptions&)> run);
int serve_exporter(const ExporterOptions& o);  // ibroute-exporter (exporter_serve.cpp)

}  // namespace ibroute::cli
