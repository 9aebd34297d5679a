// fmt's compiled part, built into the plugin and trnslurm (what fmt's own src/format.cc holds),
// so that neither needs libfmt.so nor, with -static-libstdc++, libstdc++.so: srun and every
// slurmstepd load one small object instead of three shared libraries (docs/plugin.md, "Cost"),
// and every trnslurm command starts faster (cli/CMakeLists.txt). Why not libfmt.so or Debian's
// fmt::fmt-header-only, with figures: docs/plugin.md. A missing instantiation fails the build
// (cmake/CheckNeeded.cmake) instead of quietly pulling in libfmt.so.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

#ifndef FMT_STATIC_THOUSANDS_SEPARATOR
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
#endif

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                                 locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
