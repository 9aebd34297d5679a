#include "arrow_flatbuf.hpp"

namespace trnslurm::arrow_fb {

flatbuffers::Verifier::Options verifier_options() {
  flatbuffers::Verifier::Options o;
  o.max_depth = 64;
  // Every table the reader looks at is counted: this bounds the work one message can cost.
  o.max_tables = 200000;
  o.check_alignment = true;  // flatbuffers reads scalars in place: misaligned ones are refused
  o.check_nested_flatbuffers = false;
  return o;
}

std::optional<Table> Table::at(flatbuffers::Verifier* v, const std::uint8_t* base, std::size_t pos) {
  const auto o = v->VerifyOffset(pos);
  if (o == 0) return std::nullopt;
  const auto* t = reinterpret_cast<const flatbuffers::Table*>(base + pos + o);
  if (!t->VerifyTableStart(*v)) return std::nullopt;
  v->EndTable();  // the depth limit is enforced by the callers' own recursion limits
  return Table(v, base, t);
}

std::optional<Table> Table::root(flatbuffers::Verifier& verifier, std::span<const std::byte> buffer) {
  // Root offset, then at least a table (vtable offset) and a vtable (its two sizes).
  constexpr std::size_t min_size =
      sizeof(flatbuffers::uoffset_t) + sizeof(flatbuffers::soffset_t) + 2 * sizeof(flatbuffers::voffset_t);
  if (buffer.size() < min_size) return std::nullopt;
  return at(&verifier, reinterpret_cast<const std::uint8_t*>(buffer.data()), 0);
}

namespace {
// Position of a present field's value from the start of the buffer, or 0 when absent.
std::size_t field_pos(const flatbuffers::Table* t, const std::uint8_t* base, voffset_t f) {
  const auto fo = t->GetOptionalFieldOffset(f);
  if (fo == 0) return 0;
  return static_cast<std::size_t>(reinterpret_cast<const std::uint8_t*>(t) - base) + fo;
}
}  // namespace

std::optional<Table> Table::table(voffset_t f) const {
  const auto pos = field_pos(table_, base_, f);
  if (pos == 0) return Table(verifier_, base_, nullptr);
  return at(verifier_, base_, pos);
}

std::optional<std::string_view> Table::string(voffset_t f) const {
  const auto pos = field_pos(table_, base_, f);
  if (pos == 0) return std::string_view{};
  const auto o = verifier_->VerifyOffset(pos);
  if (o == 0) return std::nullopt;
  const auto* s = reinterpret_cast<const flatbuffers::String*>(base_ + pos + o);
  if (!verifier_->VerifyString(s)) return std::nullopt;
  return std::string_view(s->c_str(), s->size());
}

std::optional<std::span<const std::byte>> Table::structs(voffset_t f, std::size_t elem_size) const {
  const auto pos = field_pos(table_, base_, f);
  if (pos == 0) return std::span<const std::byte>{};
  const auto o = verifier_->VerifyOffset(pos);
  if (o == 0) return std::nullopt;
  const std::uint8_t* vec = base_ + pos + o;
  if (!verifier_->VerifyVectorOrString(vec, elem_size)) return std::nullopt;
  const auto n = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(vec);
  return std::span<const std::byte>(reinterpret_cast<const std::byte*>(vec + sizeof(flatbuffers::uoffset_t)),
                                    std::size_t{n} * elem_size);
}

std::optional<std::uint32_t> Table::tables_size(voffset_t f) const {
  auto raw = structs(f, sizeof(flatbuffers::uoffset_t));
  if (!raw) return std::nullopt;
  return static_cast<std::uint32_t>(raw->size() / sizeof(flatbuffers::uoffset_t));
}

std::optional<Table> Table::tables_at(voffset_t f, std::uint32_t i) const {
  auto raw = structs(f, sizeof(flatbuffers::uoffset_t));
  if (!raw || std::size_t{i} >= raw->size() / sizeof(flatbuffers::uoffset_t)) return std::nullopt;
  const auto pos = static_cast<std::size_t>(reinterpret_cast<const std::uint8_t*>(raw->data()) - base_) +
                   std::size_t{i} * sizeof(flatbuffers::uoffset_t);
  return at(verifier_, base_, pos);
}

}  // namespace trnslurm::arrow_fb
