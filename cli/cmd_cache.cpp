// `trnslurm cache list|clear|key`: the recipe's compile cache by compile key (docs/cache.md).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>

#include "commands.hpp"
#include "install_paths.hpp"
#include "output.hpp"
#include "process.hpp"
#include "recipe_options.hpp"
#include "trnslurm/cache/precompile_decision.hpp"
#include "trnslurm/chain/upstream_stage.hpp"
#include "trnslurm/submit/submit_cache.hpp"

namespace trnslurm::cli {
namespace {
namespace fs = std::filesystem;

struct Options {
  std::string action;
  RecipeOptions recipe;
  DatasetOptions dataset;
  std::string key;
  CLI::Option* key_option = nullptr;
  std::string cache_dir;
  bool json = false;
};

Result<CacheLocation> location(const Options& o) {
  if (!o.cache_dir.empty()) return CacheLocation{fs::absolute(o.cache_dir), ""};
  auto recipe = o.recipe.load();
  if (!recipe) return std::unexpected(recipe.error());
  if (!recipe->cache.enabled)
    return fail("the recipe keeps no compile cache (cache.enabled = false)", recipe->where("cache.enabled"),
                "name a cache directory with --cache-dir, or enable the cache");
  return cache_location(*recipe);
}

// The keys the command acts on: --key K, else every key.
Result<std::vector<KeyEntry>> selected(const CacheLocation& loc, const std::string& key) {
  auto all = list_keys(loc);
  if (key.empty()) return all;
  const auto it = std::ranges::find(all, key, &KeyEntry::key);
  if (it == all.end())
    return fail(fmt::format("no compile key '{}' in the cache", key), loc.dir.string(),
                "'trnslurm cache list' shows the keys");
  return std::vector<KeyEntry>{*it};
}

// Asks squeue about every job of the entries' chains, once.
Result<std::vector<JobRow>> ask_slurm(const std::vector<KeyEntry>& entries) {
  std::vector<KeyUse> uses;
  for (const auto& e : entries) uses.insert(uses.end(), e.uses.begin(), e.uses.end());
  const auto ids = use_job_ids(uses);
  if (ids.empty()) return std::vector<JobRow>{};
  auto slurm = slurm_client();
  return slurm.squeue(ids);
}

std::string input_value(const KeyEntry& e, std::string_view name) {
  if (!e.inputs.is_array()) return "?";
  for (const auto& i : e.inputs)
    if (i.value("name", "") == name) return i.value("value", "?");
  return "?";
}

int list(const Options& o, const CacheLocation& loc) {
  auto entries = selected(loc, o.key);
  if (!entries) {
    return exit_with(entries.error(), ErrorKind::input);
  }
  auto rows = ask_slurm(*entries);
  if (!rows) {
    return exit_with(rows.error(), ErrorKind::slurm);
  }
  if (o.json) {
    auto out = nlohmann::json::array();
    for (const auto& e : *entries) {
      nlohmann::json chains = nlohmann::json::array();
      for (const auto& u : e.uses) chains.push_back(to_json(u));
      out.push_back({{"key", e.key},
                     {"inputs", e.inputs},
                     {"warm", e.warm ? nlohmann::json{{"since", e.warm->since},
                                                      {"chain", e.warm->chain},
                                                      {"job", e.warm->job},
                                                      {"host", e.warm->host}}
                                     : nlohmann::json(nullptr)},
                     {"bytes", e.bytes ? nlohmann::json(*e.bytes) : nlohmann::json(nullptr)},
                     {"graphs", e.bytes ? (key_dir(loc, e.key) / "neuron").string() : graphs_url(loc, e.key)},
                     {"last_use", e.last_use},
                     {"chains", chains},
                     {"live_chains", live_chains(e.uses, *rows)}});
    }
    fmt::print("{}\n", out.dump(2));
    return exit_ok;
  }
  if (entries->empty()) {
    fmt::print("no compile key in {}\n", loc.dir.string());
    return exit_ok;
  }
  fmt::print("{:<16}  {:<5} {:<20} {:>9}  {:<20}  {}\n", "KEY", "STATE", "WARM SINCE", "SIZE", "LAST USE",
             "CHAINS");
  for (const auto& e : *entries) {
    const auto live = live_chains(e.uses, *rows);
    std::vector<std::string> chains;
    chains.reserve(e.uses.size());
    for (const auto& u : e.uses)
      chains.push_back(std::ranges::find(live, u.chain_id) != live.end() ? u.chain_id + " (live)"
                                                                         : u.chain_id);
    fmt::print("{:<16}  {:<5} {:<20} {:>9}  {:<20}  {}\n", e.key, e.warm ? "warm" : "cold",
               e.warm ? e.warm->since : "-", e.bytes ? format_bytes(*e.bytes) : "in url",
               e.last_use.empty() ? "-" : e.last_use,
               chains.empty() ? "-" : fmt::format("{}", fmt::join(chains, ", ")));
    fmt::print("  {} tp={} pp={} dp={} mbs={} seq_len={} on {}\n", input_value(e, "model.shape"),
               input_value(e, "train.tp"), input_value(e, "train.pp"), input_value(e, "plan.dp"),
               input_value(e, "train.mbs"), input_value(e, "model.seq_len"),
               input_value(e, "cluster.instance"));
  }
  return exit_ok;
}

int clear(const Options& o, const CacheLocation& loc) {
  auto entries = selected(loc, o.key);
  if (!entries) {
    return exit_with(entries.error(), ErrorKind::input);
  }
  int rc = exit_ok;
  for (const auto& e : *entries) {
    // Under the key's lock: a submit of this key waits, and then sees it gone.
    auto lock = lock_key(loc, e.key);
    if (!lock) {
      return exit_with(lock.error(), ErrorKind::local);
    }
    const auto uses = read_uses(loc, e.key);
    auto rows = ask_slurm({KeyEntry{e.key, {}, {}, uses, {}, {}}});
    if (!rows) {
      return exit_with(rows.error(), ErrorKind::slurm);
    }
    if (const auto live = live_chains(uses, *rows); !live.empty()) {
      rc = exit_with(Error{fmt::format("compile key {} is in use by chain(s) {}: not cleared", e.key,
                                       fmt::join(live, ", ")),
                           key_dir(loc, e.key).string(),
                           "wait for them to end, or 'trnslurm cancel CHAIN' them, then clear again"},
                     ErrorKind::refused);
      continue;
    }
    if (auto r = remove_key(loc, e.key); !r) {
      rc = exit_with(r.error(), ErrorKind::local);
      continue;
    }
    fmt::print("cleared compile key {}\n", e.key);
    if (!loc.url.empty())
      fmt::print("  its graphs are in {}: remove them there (aws s3 rm --recursive {})\n",
                 graphs_url(loc, e.key), graphs_url(loc, e.key));
  }
  if (entries->empty()) fmt::print("no compile key in {}\n", loc.dir.string());
  return rc;
}

// The recipe's own key and what it is made of.
int key(const Options& o) {
  const auto planned = load_and_plan(o.recipe, o.dataset);
  if (!planned) {
    return exit_with(planned.error(), ErrorKind::input);
  }
  auto c = prepare_cache(planned->recipe, planned->plan, PrecompileMode::automatic, true,
                         {{"backend_dir", backend_dir().string()}});
  if (!c) {
    return exit_with(c.error(), ErrorKind::input);
  }
  if (!*c) {
    fmt::print("the recipe keeps no compile cache (cache.enabled = false)\n");
    return exit_ok;
  }
  const auto& k = (*c)->key;
  if (o.json) {
    auto inputs = nlohmann::json::array();
    for (const auto& i : k.inputs) inputs.push_back({{"name", i.name}, {"value", i.value}, {"why", i.why}});
    const nlohmann::json j{{"key", k.hex},
                           {"cache_dir", (*c)->loc.dir.string()},
                           {"graphs", graphs_url((*c)->loc, k.hex)},
                           {"warm", (*c)->warm.has_value()},
                           {"inputs", inputs}};
    fmt::print("{}\n", j.dump(2));
    return exit_ok;
  }
  fmt::print(
      "compile key {} ({})\n", k.hex,
      (*c)->warm ? fmt::format("warm since {}, chain {}", (*c)->warm->since, (*c)->warm->chain) : "cold");
  fmt::print("graphs in {}\n", graphs_url((*c)->loc, k.hex));
  for (const auto& i : k.inputs) fmt::print("  {:<16} {}\n", i.name, i.value);
  return exit_ok;
}

int run(const Options& o) {
  if (o.action == "key") return key(o);
  // --key '' (an unset variable in a script) is refused: it must not read as "every key".
  if (o.key_option->count() > 0 && o.key.empty()) {
    return exit_with(
        Error{"an empty key selects nothing", "--key",
              "give a key ('trnslurm cache list' shows them), or leave --key out to act on every key"},
        ErrorKind::usage);
  }
  if (!o.key.empty() && !is_compile_key(o.key)) {
    return exit_with(Error{fmt::format("'{}' is not a compile key", o.key), "--key",
                           "keys are 16 hex digits: 'trnslurm cache list' shows them"},
                     ErrorKind::usage);
  }
  auto loc = location(o);
  if (!loc) {
    return exit_with(loc.error(), ErrorKind::input);
  }
  return o.action == "list" ? list(o, *loc) : clear(o, *loc);
}

}  // namespace

Command add_cache(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("cache", "The recipe's compile cache by compile key: list, clear, key");
  sub->add_option("action", opts->action,
                  "list: keys, state, size, last use, chains; clear: remove; key: this recipe's")
      ->required()
      ->check(CLI::IsMember({"list", "clear", "key"}))
      ->type_name("list|clear|key");
  add_recipe_options(*sub, opts->recipe);
  add_dataset_options(*sub, opts->dataset);
  opts->key_option = sub->add_option("--key", opts->key, "list or clear this key only")->type_name("KEY");
  sub->add_option("--cache-dir", opts->cache_dir, "The cache directory (default: the recipe's cache.dir)")
      ->type_name("DIR");
  sub->add_flag("--json", opts->json, "list, key: print JSON");
  sub->footer(
      "Exit codes: 0 done, 1 a key is in use by a live chain (not cleared) or Slurm could not be asked,\n"
      "2 bad recipe, option or key. clear removes the key's records and, unless cache.url sends them\n"
      "elsewhere, its compiled graphs; it refuses a key a queued or running chain uses.\n"
      "Examples:\n"
      "  trnslurm cache list\n"
      "  trnslurm cache key --set train.tp=16      # the key a changed recipe would have\n"
      "  trnslurm cache clear --key 3f2a9c0d1b4e5f67\n"
      "  trnslurm cache list --cache-dir /fsx/neuron-cache/llama3-8b --json");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
