#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "fixtures.hpp"
#include "trnslurm/instance/instance.hpp"
#include "trnslurm/recipe/recipe.hpp"

using namespace trnslurm;

namespace {

const InstanceType& bundled(std::string_view name) {
  const auto* t = bundled_instances().find(name);
  INFO(name);
  REQUIRE(t != nullptr);
  return *t;
}

// A site file with one type, for the refusals below.
Result<InstanceTable> site(const std::string& text) {
  return load_instance_table(InstanceFile{text, "site.toml", InstanceOrigin::site});
}

std::string refusal(const std::string& text) {
  auto t = site(text);
  REQUIRE_FALSE(t.has_value());
  return to_string(t.error());
}

constexpr const char* minimal = R"(
[instances."trnx.12xlarge"]
target = "trn3"
devices = 4
cores_per_device = 8
lnc = [1, 2]
lnc_default = 2
hbm_gib_per_device = 144
)";

}  // namespace

TEST_CASE("instance: the bundled table parses and holds every type a user can rent") {
  auto parsed = load_instance_table(std::nullopt);
  REQUIRE(parsed.has_value());
  CHECK(parsed->notes().empty());
  for (const auto* name : {"trn1.2xlarge", "trn1.32xlarge", "trn1n.32xlarge", "trn2.3xlarge", "trn2.48xlarge",
                           "trn2u.48xlarge", "trn3.48xlarge", "cpu"})
    CHECK(parsed->find(name) != nullptr);
}

TEST_CASE("instance: every bundled figure cites a source, and an unconfirmed one says why") {
  for (const auto& t : bundled_instances().types()) {
    if (t.cpu()) continue;
    for_each_figure(t, [&](std::string_view key, const auto& figure) {
      if (figure.at.file.empty()) return;  // not given for this type
      INFO(t.name << "." << key);
      CHECK_FALSE(figure.source.empty());
      CHECK(bundled_instances().source(figure.source) != nullptr);
      if (!figure.confirmed) CHECK_FALSE(figure.note.empty());
    });
  }
  for (const auto& s : bundled_instances().sources()) {
    INFO(s.id);
    CHECK_FALSE(s.title.empty());
    // Public pages only: a docs URL, or a public repository at a full commit.
    CHECK(
        (s.url.starts_with("https://") || (s.repo.find('/') != std::string::npos && s.commit.size() == 40)));
  }
}

TEST_CASE("instance: what AWS and the Neuron docs state, per type") {
  const auto& trn1 = bundled("trn1.32xlarge");
  CHECK(trn1.physical_cores() == 32);
  CHECK(trn1.target.value == "trn1");
  CHECK(trn1.efa_devices.value == 8U);
  CHECK(bundled("trn1n.32xlarge").efa_devices.value == 16U);
  CHECK(bundled("trn1.2xlarge").physical_cores() == 2);
  CHECK(bundled("trn1.2xlarge").efa_devices.value == 0U);
  const auto& trn2 = bundled("trn2.48xlarge");
  CHECK(trn2.physical_cores() == 128);
  CHECK(trn2.lnc_default.value == 2U);
  CHECK(trn2.lnc_choices() == "1 or 2");
  CHECK(trn2.ultraserver_size() == 1);
  CHECK(bundled("trn2.3xlarge").physical_cores() == 8);
  CHECK_FALSE(bundled("trn2.3xlarge").devices.confirmed);
  CHECK_FALSE(bundled("trn2.3xlarge").vcpus.value.has_value());
  const auto& trn2u = bundled("trn2u.48xlarge");
  CHECK(trn2u.ultraserver_size() == 4);
  CHECK(trn2u.ultraserver_nodes.confirmed);
  const auto& trn3 = bundled("trn3.48xlarge");
  CHECK(trn3.target.value == "trn3");
  CHECK(trn3.physical_cores() == 128);
  CHECK(trn3.hbm_gib_per_device.value == 144.0);
  CHECK(trn3.lnc_default.value == 2U);
  CHECK(trn3.ultraserver_size() == 4);
  CHECK_FALSE(trn3.efa_devices.value.has_value());
}

TEST_CASE("instance: cores per node follow the instance and the LNC") {
  CHECK(cores_per_node(bundled("trn1.32xlarge"), 1, std::nullopt).value() == 32);
  CHECK(cores_per_node(bundled("trn1n.32xlarge"), 1, std::nullopt).value() == 32);
  CHECK(cores_per_node(bundled("trn1.2xlarge"), 1, std::nullopt).value() == 2);
  CHECK(cores_per_node(bundled("trn2.48xlarge"), 1, std::nullopt).value() == 128);
  CHECK(cores_per_node(bundled("trn2.48xlarge"), 2, std::nullopt).value() == 64);
  CHECK(cores_per_node(bundled("trn2.3xlarge"), 2, std::nullopt).value() == 4);
  CHECK(cores_per_node(bundled("trn2u.48xlarge"), 2, std::nullopt).value() == 64);
  CHECK(cores_per_node(bundled("trn3.48xlarge"), 1, std::nullopt).value() == 128);
  CHECK(cores_per_node(bundled("trn3.48xlarge"), 2, std::nullopt).value() == 64);
}

TEST_CASE("instance: refusals of cores and LNC") {
  const auto r = cores_per_node(bundled("trn1.32xlarge"), 2, std::nullopt);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().where == "cluster.lnc");
  CHECK(r.error().hint == "trn1.32xlarge supports only lnc = 1");
  const auto three = cores_per_node(bundled("trn3.48xlarge"), 4, std::nullopt);
  REQUIRE_FALSE(three.has_value());
  CHECK(three.error().hint == "use lnc = 1 or 2");
  const auto contradiction = cores_per_node(bundled("trn2.48xlarge"), 2, 128u);
  REQUIRE_FALSE(contradiction.has_value());
  CHECK(contradiction.error().what == "cores_per_node = 128 but trn2.48xlarge at lnc = 2 has 64 cores");
  CHECK(cores_per_node(bundled("trn2.48xlarge"), 2, 64u).value() == 64);
  const auto& cpu = bundled("cpu");
  CHECK_FALSE(cores_per_node(cpu, 1, std::nullopt).has_value());
  CHECK(cores_per_node(cpu, 1, 6u).value() == 6);
}

TEST_CASE("instance: device memory per core") {
  CHECK(memory_per_core_bytes(bundled("trn1.32xlarge"), 1) == 16ull << 30);
  CHECK(memory_per_core_bytes(bundled("trn2.48xlarge"), 2) == 24ull << 30);
  CHECK(memory_per_core_bytes(bundled("trn2.48xlarge"), 1) == 12ull << 30);
  CHECK(memory_per_core_bytes(bundled("trn3.48xlarge"), 2) == 36ull << 30);
  CHECK(memory_per_core_bytes(bundled("trn3.48xlarge"), 1) == 18ull << 30);
  CHECK(memory_per_core_bytes(bundled("cpu"), 1) == 0);
}

TEST_CASE("instance: one bundled type read alone equals the whole file's") {
  for (const auto& t : bundled_instances().types()) {
    INFO(t.name);
    const auto one = bundled_instance(t.name);
    REQUIRE(one.has_value());
    for (const auto& key : instance_figure_keys()) CHECK(figure_json(*one, key) == figure_json(t, key));
    CHECK(one->at.line == t.at.line);
  }
  CHECK_FALSE(bundled_instance("m5.large").has_value());
  CHECK_FALSE(bundled_instance("trn2").has_value());
}

TEST_CASE("instance: a site type, in short and long form") {
  auto t = site(std::string(minimal) + R"(
[sources.mine]
title = "our measurements"
url = "https://example.com/trnx"

[instances."trnx.24xlarge"]
target = { value = "trn3", source = "trn3-arch", confirmed = true }
devices = { value = 8, source = "mine", confirmed = false, note = "counted on one node" }
cores_per_device = 8
lnc = [2]
lnc_default = 2
hbm_gib_per_device = 144.5
ultraserver_nodes = 2
)");
  REQUIRE(t.has_value());
  const auto* x = t->find("trnx.12xlarge");
  REQUIRE(x != nullptr);
  CHECK(x->origin == InstanceOrigin::site);
  CHECK(x->physical_cores() == 32);
  CHECK_FALSE(x->devices.confirmed);
  CHECK(x->devices.source.empty());
  CHECK(to_string(x->devices.at) == "site.toml:4:11");
  const auto* y = t->find("trnx.24xlarge");
  REQUIRE(y != nullptr);
  CHECK(y->target.confirmed);
  CHECK(y->devices.note == "counted on one node");
  CHECK(y->ultraserver_size() == 2);
  CHECK(t->source("mine") != nullptr);
  CHECK(t->find("trn2.48xlarge") != nullptr);  // the bundled ones are still there
  CHECK(unconfirmed_figures(*y, {"devices", "target"}) ==
        std::vector<std::string>{"devices = 8 (counted on one node)"});
  CHECK(unconfirmed_figures(*x, {"devices"}) == std::vector<std::string>{"devices = 4 (site definition)"});
}

TEST_CASE("instance: a site type that shadows a bundled one says so") {
  auto t = site(R"(
[instances."trn2.48xlarge"]
target = "trn2"
devices = 16
cores_per_device = 8
lnc = [1, 2]
lnc_default = 1
hbm_gib_per_device = 96
)");
  REQUIRE(t.has_value());
  REQUIRE(t->notes().size() == 1);
  CHECK(t->notes()[0] == "site.toml:2:12: [instances.\"trn2.48xlarge\"] replaces the bundled definition");
  CHECK(t->find("trn2.48xlarge")->lnc_default.value == 1U);
  CHECK(t->find("trn2.48xlarge")->origin == InstanceOrigin::site);
}

TEST_CASE("instance: incomplete and hostile definitions are refused with their position") {
  // Missing what the plan needs.
  CHECK(refusal("[instances.\"a.b\"]\ntarget = \"trn2\"\ndevices = 1\n") ==
        "site.toml:1:12: [instances.\"a.b\"] lacks cores_per_device (physical NeuronCores per device) "
        "(add cores_per_device = 8)");
  CHECK(
      refusal("[instances.\"a.b\"]\ndevices = 1\n") ==
      "site.toml:1:12: [instances.\"a.b\"] has no target (add target = \"trn2\" (the compiler target: trn1, "
      "trn2, trn3), or \"cpu\")");
  // Typos, wrong kinds, ranges.
  CHECK(refusal("[instances.\"a.b\"]\nlnc_defualt = 1\n") ==
        "site.toml:2:1: unknown key 'lnc_defualt' in [instances.\"a.b\"] (did you mean 'lnc_default'?)");
  CHECK(refusal("[instances.\"a.b\"]\ndevices = \"16\"\n") ==
        "site.toml:2:11: instances.\"a.b\".devices must be a whole number, got a string (remove the quotes: "
        "devices = 16)");
  CHECK(refusal("[instances.\"a.b\"]\ndevices = 4294967297\n") ==
        "site.toml:2:11: instances.\"a.b\".devices = 4294967297 is out of range (Neuron devices per instance "
        "is a whole number from 1 to 1024)");
  CHECK(refusal("[instances.\"a.b\"]\ndevices = -1\n").find("out of range") != std::string::npos);
  CHECK(refusal("[instances.\"a.b\"]\nhbm_gib_per_device = nan\n").find("out of range") != std::string::npos);
  CHECK(refusal("[instances.\"a.b\"]\nlnc = []\n").find("must be an array of whole numbers") !=
        std::string::npos);
  CHECK(refusal("[instances.\"a.b\"]\nlnc = [2, 2]\n") ==
        "site.toml:2:11: instances.\"a.b\".lnc lists 2 twice (list each value once)");
  // Consistency.
  auto bad_default = std::string(minimal);
  bad_default.replace(bad_default.find("lnc_default = 2"), 15, "lnc_default = 4");
  CHECK(refusal(bad_default) ==
        "site.toml:7:15: lnc_default = 4 is not one of lnc = [1 or 2] (make lnc_default "
        "one of the lnc values)");
  auto odd = std::string(minimal);
  odd.replace(odd.find("cores_per_device = 8"), 20, "cores_per_device = 3");
  CHECK(refusal(odd).find("lnc 2 does not divide the 3 cores of a device") != std::string::npos);
  // Sources.
  CHECK(refusal("[instances.\"a.b\"]\ndevices = { value = 1, source = \"nowhere\" }\n") ==
        "site.toml:2:33: instances.\"a.b\".devices cites source 'nowhere', which no [sources.nowhere] table "
        "defines (add [sources.nowhere] with title and url)");
  CHECK(refusal("[instances.\"a.b\"]\ndevices = { value = 1, confirmed = true }\n") ==
        "site.toml:2:1: instances.\"a.b\".devices is confirmed but cites no source (add source = \"<id>\" "
        "naming the page that states it, or confirmed = false)");
  CHECK(refusal("[instances.\"a.b\"]\ndevices = { vale = 1 }\n").find("did you mean 'value'?") !=
        std::string::npos);
  CHECK(refusal("[sources.x]\ntitle = \"t\"\n") ==
        "site.toml:1:10: source 'x' names no page (give url = \"https://...\", or repo, path and commit of a "
        "public repository)");
  CHECK(refusal("[sources.trn2-arch]\nurl = \"https://x\"\n").find("already defined") != std::string::npos);
  // Names that end up in messages and scripts.
  CHECK(refusal("[instances.\"a b;rm -rf /\"]\ntarget = \"cpu\"\n").find("is not a plain name") !=
        std::string::npos);
  CHECK(refusal("[instances.\"a.b\"]\ntarget = \"trn2; reboot\"\n").find("is not a plain name") !=
        std::string::npos);
  CHECK(refusal("[instances.\"a.b\"]\nnote = \"x\"\n").find("unknown key 'note'") != std::string::npos);
  // Structure.
  CHECK(refusal("[instance.\"a.b\"]\n") ==
        "site.toml:1:2: unknown section 'instance' (did you mean 'instances'?)");
  CHECK(refusal("instances = 3\n") ==
        "site.toml:1:13: 'instances' must be a table, got an integer (write [instances.<name>] sections)");
  CHECK(
      refusal("[instances.\"a.b\"]\ntarget = \"cpu\"\ndevices = 4\n") ==
      "site.toml:3:11: [instances.\"a.b\"] has target \"cpu\" and devices (a cpu type has no Neuron device: "
      "remove it (the recipe gives cluster.cores_per_node))");
  CHECK(refusal("[instances.\"a.b\"\n").find("site.toml:1:") == 0);  // TOML syntax
}

TEST_CASE("instance: a refused file adds nothing") {
  InstanceTable t = bundled_instances();
  const auto before = t.types().size();
  auto r = t.add({std::string(minimal) + "\n[instances.\"bad\"]\ntarget = \"trn2\"\n", "site.toml",
                  InstanceOrigin::site});
  CHECK_FALSE(r.has_value());
  CHECK(t.types().size() == before);
  CHECK(t.find("trnx.12xlarge") == nullptr);
}

TEST_CASE("instance: JSON lists figures with their sources") {
  const auto j = to_json(bundled_instances());
  const auto& types = j.at("instances");
  const auto it =
      std::find_if(types.begin(), types.end(), [](const auto& t) { return t.at("name") == "trn3.48xlarge"; });
  REQUIRE(it != types.end());
  CHECK(it->at("origin") == "bundled");
  CHECK(it->at("figures").at("hbm_gib_per_device").at("value") == 144.0);
  CHECK(it->at("figures").at("hbm_gib_per_device").at("source") == "trainium3");
  CHECK(it->at("figures").at("efa_devices").at("value").is_null());
  CHECK(it->at("figures").at("efa_devices").at("confirmed") == false);
  CHECK(j.at("sources").at("trainium3").at("path") == "about-neuron/arch/neuron-hardware/trainium3.rst");
  CHECK(figure_text(bundled("trn2.48xlarge"), "lnc") == "1, 2");
  CHECK(figure_text(bundled("trn2.3xlarge"), "vcpus") == "unknown");
}

namespace {
std::string minimal_recipe() {
  std::ifstream in(test::fixture("recipes/minimal.toml"));
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("instance: a recipe defines its own types, in the same format") {
  const std::string text = minimal_recipe() + minimal;  // trnx.12xlarge
  auto r = load_recipe_text(text, "trnslurm.toml", {{"cluster.instance", "trnx.12xlarge", ""}});
  REQUIRE(r.has_value());
  const auto* x = r->instances.find("trnx.12xlarge");
  REQUIRE(x != nullptr);
  CHECK(x->origin == InstanceOrigin::recipe);
  CHECK(x->at.file == "trnslurm.toml");
  CHECK(r->cluster.lnc == 2);
  CHECK(r->cluster.cores_per_node == 16u);
  CHECK(r->instances.find("trn2.48xlarge") != nullptr);
  for (const auto& [key, value] : r->values) CHECK_FALSE(key.starts_with("instances."));

  // A bad definition in a recipe is the recipe's error, at its position.
  auto bad = load_recipe_text(minimal_recipe() + "\n[instances.\"t.x\"]\ndevices = 0\n", "trnslurm.toml");
  REQUIRE_FALSE(bad.has_value());
  CHECK(to_string(bad.error())
            .starts_with("trnslurm.toml:29:11: instances.\"t.x\".devices = 0 is out of range"));

  // Shadowing a bundled type is said.
  std::string shadow(minimal);
  shadow.replace(shadow.find("trnx.12xlarge"), 13, "trn1.32xlarge");
  shadow.replace(shadow.find("target = \"trn3\""), 15, "target = \"trn1\"");
  auto s = load_recipe_text(minimal_recipe() + shadow, "trnslurm.toml");
  REQUIRE(s.has_value());
  REQUIRE(s->instances.notes().size() == 1);
  CHECK(s->instances.notes()[0].find("replaces the bundled definition") != std::string::npos);
  CHECK(s->cluster.cores_per_node == 16u);  // the recipe's definition is the one used
}

TEST_CASE("instance: a recipe names a site type only where the site's file is read") {
  const std::string text = minimal_recipe();
  const std::vector<Override> set{{"cluster.instance", "trnx.12xlarge", ""}};
  auto unknown = load_recipe_text(text, "trnslurm.toml", set);
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().what == "unknown instance type 'trnx.12xlarge'");
  CHECK(unknown.error().hint.find("docs/instances.md") != std::string::npos);
  const auto with_site = site(minimal);
  REQUIRE(with_site.has_value());
  auto known = load_recipe_text(text, "trnslurm.toml", set, *with_site);
  REQUIRE(known.has_value());
  CHECK(known->instances.find("trnx.12xlarge")->origin == InstanceOrigin::site);
}

TEST_CASE("instance: choose_instance resolves lnc and cores, and names the key at fault") {
  const auto& table = bundled_instances();
  const auto trn2 = choose_instance(table, "trn2.48xlarge", 0, std::nullopt);
  REQUIRE(trn2.has_value());
  CHECK(trn2->type == table.find("trn2.48xlarge"));
  CHECK(trn2->lnc == 2);
  CHECK(trn2->cores_per_node == 64);
  const auto trn3 = choose_instance(table, "trn3.48xlarge", 1, std::nullopt);
  REQUIRE(trn3.has_value());
  CHECK(trn3->cores_per_node == 128);

  const auto typo = choose_instance(table, "trn1.32xlarg", 0, std::nullopt);
  REQUIRE_FALSE(typo.has_value());
  CHECK(typo.error().where == "cluster.instance");
  CHECK(typo.error().hint.starts_with("did you mean 'trn1.32xlarge'?"));

  const auto lnc = choose_instance(table, "trn1.32xlarge", 2, std::nullopt);
  REQUIRE_FALSE(lnc.has_value());
  CHECK(lnc.error().where == "cluster.lnc");

  const auto cpu = choose_instance(table, "cpu", 0, std::nullopt);
  REQUIRE_FALSE(cpu.has_value());
  CHECK(cpu.error().where == "cluster.cores_per_node");
}
