#include "trnslurm/util/elf_symbol.hpp"

#include <elf.h>

#include <fmt/format.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "trnslurm/util/file.hpp"

namespace trnslurm {

namespace {

template <class T>
bool read_at(std::string_view data, std::uint64_t offset, T& out) {
  if (offset > data.size() || data.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, data.data() + offset, sizeof(T));
  return true;
}

}  // namespace

Result<std::uint32_t> read_u32_symbol(const std::filesystem::path& file, std::string_view name) {
  const std::string where = file.string();
  // The plugin is a few MiB; 256 MiB covers a build with debug information.
  const auto contents = read_file_or_fail(file, std::size_t{256} << 20, "the plugin");
  if (!contents) return std::unexpected(contents.error());
  const std::string_view data = *contents;
  Elf64_Ehdr eh{};
  if (!read_at(data, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return fail("not a 64-bit little-endian ELF file", where);

  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (!read_at(data, eh.e_shoff + i * sizeof(Elf64_Shdr), sections[i]))
      return fail("truncated section table", where);
  }
  for (const auto& sym_sec : sections) {
    if (sym_sec.sh_type != SHT_DYNSYM || sym_sec.sh_link >= sections.size()) continue;
    const auto& str_sec = sections[sym_sec.sh_link];
    for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= sym_sec.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym{};
      if (!read_at(data, sym_sec.sh_offset + off, sym)) return fail("truncated symbol table", where);
      if (sym.st_name >= str_sec.sh_size || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sections.size())
        continue;
      const std::uint64_t name_off = str_sec.sh_offset + sym.st_name;
      if (name_off >= data.size()) continue;
      const char* sym_name = data.data() + name_off;
      const std::size_t max_len = data.size() - name_off;
      if (strnlen(sym_name, max_len) != name.size() || std::memcmp(sym_name, name.data(), name.size()) != 0)
        continue;
      const auto& home = sections[sym.st_shndx];
      if (sym.st_value < home.sh_addr || sym.st_value - home.sh_addr + 4 > home.sh_size ||
          home.sh_type == SHT_NOBITS)
        return fail(fmt::format("symbol {} is not stored in the file", name), where);
      std::uint32_t value = 0;
      if (!read_at(data, home.sh_offset + (sym.st_value - home.sh_addr), value))
        return fail(fmt::format("symbol {} lies outside the file", name), where);
      return value;
    }
  }
  return fail(fmt::format("no exported symbol {}", name), where, "is this a trnslurm plugin?");
}

}  // namespace trnslurm
