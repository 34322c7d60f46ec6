#include "models/trace/trace_output.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tpb::trace {

TraceOutput::TraceOutput(std::string path, const char* kind) : path_(std::move(path)) {
  f_ = std::fopen(path_.c_str(), "wb");
  if (!f_)
    throw std::runtime_error(std::string(kind) + " '" + path_ +
                             "': cannot open for writing: " + std::strerror(errno));
  buf_.reserve(kBlock + 4096);
}

TraceOutput::~TraceOutput() {
  if (f_) std::fclose(f_);
}

void TraceOutput::flush() {
  if (error_.empty() && !buf_.empty() && f_) {
    if (std::fwrite(buf_.data(), 1, buf_.size(), f_) == buf_.size())
      bytes_ += buf_.size();
    else
      error_ = "'" + path_ + "': write failed: " + std::strerror(errno);
  }
  buf_.clear();
}

void TraceOutput::close() {
  flush();
  std::FILE* f = f_;
  f_ = nullptr;
  if (f && std::fclose(f) != 0 && error_.empty())
    error_ = "'" + path_ + "': cannot finish writing: " + std::strerror(errno);
}

}  // namespace tpb::trace
