#include "models/isa/program_spool.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tpb::isa {

namespace {

constexpr std::size_t kBufferWords = 1024;  // 64 KiB per buffered read or write

}  // namespace

std::size_t VectorSource::read(RawInst* out, std::size_t n) {
  const std::size_t k = std::min(n, words_.size() - next_);
  std::copy_n(words_.begin() + static_cast<std::ptrdiff_t>(next_), k, out);
  next_ += k;
  return k;
}

Spool::Spool() = default;

Spool::~Spool() {
  if (f_) std::fclose(f_);
}

void Spool::flush() {
  if (buf_.empty() || !f_) return;
  if (std::fwrite(buf_.data(), kInstBytes, buf_.size(), f_) != buf_.size() || std::fflush(f_) != 0)
    throw std::runtime_error(std::string("cannot write the program's temporary file: ") +
                             std::strerror(errno));
  buf_.clear();
}

void Spool::append(const RawInst& w) {
  buf_.push_back(w);
  ++count_;
  if (!f_ && buf_.size() > kMemoryWords) {
    // Past what is kept in memory: to disk from here on.
    f_ = std::tmpfile();
    if (!f_)
      throw std::runtime_error(std::string("cannot create a temporary file for the program: ") +
                               std::strerror(errno));
    flush();
  } else if (f_ && buf_.size() == kBufferWords) {
    flush();
  }
}

class Spool::Reader : public InstructionSource {
 public:
  Reader(std::FILE* f, std::uint64_t n) : f_(f), n_(n) {}
  std::uint64_t size() const override { return n_; }
  std::size_t read(RawInst* out, std::size_t n) override {
    const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, n_ - done_));
    if (k == 0) return 0;
    if (std::fread(out, kInstBytes, k, f_) != k)
      throw std::runtime_error("cannot read the program's temporary file");
    done_ += k;
    return k;
  }

 private:
  std::FILE* f_;
  std::uint64_t n_, done_ = 0;
};

std::unique_ptr<InstructionSource> Spool::reader() {
  if (!f_) return std::make_unique<VectorSource>(buf_);
  flush();
  std::rewind(f_);
  return std::make_unique<Reader>(f_, count_);
}

bool Spool::copy_to(std::FILE* out) {
  std::unique_ptr<InstructionSource> r = reader();
  std::vector<RawInst> buf(kBufferWords);
  for (;;) {
    const std::size_t k = r->read(buf.data(), buf.size());
    if (k == 0) return true;
    if (std::fwrite(buf.data(), kInstBytes, k, out) != k) return false;
  }
}

std::vector<InstructionNote> notes_of(const std::vector<RawInst>& words) {
  std::vector<InstructionNote> v;
  v.reserve(words.size());
  for (std::size_t i = 0; i < words.size(); ++i)
    v.push_back(InstructionNote{static_cast<std::uint32_t>(i), events_of(words[i]), words[i][0],
                                update_core_of(words[i])});
  return v;
}

SpooledProgram::SpooledProgram(std::string path) : path_(std::move(path)) {
  for (auto& s : spools_) s = std::make_unique<Spool>();
}

std::unique_ptr<SpooledProgram> SpooledProgram::load(const std::string& path, bool keep_notes) {
  auto p = std::make_unique<SpooledProgram>(path);
  p->keep_notes(keep_notes);
  stream_program(path, *p);
  return p;
}

void SpooledProgram::inst(Queue e, const RawInst& raw, const SourceLoc& loc) {
  if (binary_queue(raw, loc.file, 0) != e) ++misplaced_;
  if (e == Queue::Dve || e == Queue::Act) {
    const bool act = e == Queue::Act;
    if (dve_act_order_.empty() || dve_act_order_.back().first != act)
      dve_act_order_.emplace_back(act, 0);
    ++dve_act_order_.back().second;
  }
  spools_[static_cast<unsigned>(e)]->append(raw);
  if (loc.line == 0) binary_ = true;
  if (keep_notes_) {
    const auto line = static_cast<std::uint32_t>(loc.line > 0 ? loc.line : words_);
    notes_[static_cast<unsigned>(e)].push_back(
        InstructionNote{line, events_of(raw), raw[0], update_core_of(raw)});
  }
  ++words_;
}

std::uint64_t SpooledProgram::size() const {
  std::uint64_t n = 0;
  for (const auto& s : spools_) n += s->size();
  return n;
}

std::unique_ptr<InstructionSource> SpooledProgram::source(Queue e) {
  return spools_[static_cast<unsigned>(e)]->reader();
}

void SpooledProgram::fold_act_into_dve() {
  const auto dve = static_cast<unsigned>(Queue::Dve), act = static_cast<unsigned>(Queue::Act);
  if (spools_[act]->size() == 0) return;
  std::unique_ptr<InstructionSource> from[2] = {spools_[dve]->reader(), spools_[act]->reader()};
  auto merged = std::make_unique<Spool>();
  std::vector<InstructionNote> notes;
  std::size_t noted[2] = {0, 0};
  std::vector<RawInst> buf(256);
  for (const auto& [is_act, count] : dve_act_order_) {
    for (std::uint64_t left = count; left != 0;) {
      const std::size_t k = from[is_act]->read(
          buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size())));
      if (k == 0) break;
      for (std::size_t i = 0; i < k; ++i) {
        if (is_act) fold_word_into_dve(buf[i]);
        merged->append(buf[i]);
      }
      left -= k;
    }
    const std::vector<InstructionNote>& n = notes_[is_act ? act : dve];
    const std::size_t take = std::min<std::size_t>(count, n.size() - noted[is_act]);
    notes.insert(notes.end(), n.begin() + static_cast<long>(noted[is_act]),
                 n.begin() + static_cast<long>(noted[is_act] + take));
    noted[is_act] += take;
  }
  const std::uint64_t total = merged->size();
  spools_[dve] = std::move(merged);
  spools_[act] = std::make_unique<Spool>();
  notes_[dve] = std::move(notes);
  notes_[act].clear();
  dve_act_order_.assign(1, {false, total});
}

bool SpooledProgram::write_binary(std::FILE* out) {
  for (auto& s : spools_)
    if (!s->copy_to(out)) return false;
  return true;
}

}  // namespace tpb::isa
