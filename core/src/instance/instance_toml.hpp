#pragma once
// The instances format read from a parsed TOML document: for the table itself and for the
// recipe loader, which parses the recipe once and hands its [instances.*] tables over.
#include <toml++/toml.h>

#include <string>

#include "trnslurm/instance/instance.hpp"

namespace trnslurm {

struct InstanceReadOptions {
  InstanceOrigin origin = InstanceOrigin::site;
  bool other_tables_allowed = false;  // a recipe's other sections are the recipe's business
  bool check_sources = true;          // off for one bundled type read alone (its sources are elsewhere)
};

Result<void> add_instance_tables(InstanceTable& table, const toml::table& root, const std::string& file,
                                 const InstanceReadOptions& options);

}  // namespace trnslurm
