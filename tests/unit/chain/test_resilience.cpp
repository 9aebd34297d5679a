#include <catch2/catch.hpp>

#include <string>

#include "fixtures.hpp"
#include "trnslurm/chain/job_script.hpp"
#include "trnslurm/chain/restarts.hpp"
#include "trnslurm/recipe/recipe.hpp"

using namespace trnslurm;

TEST_CASE("resilience: recipe keys, defaults, ranges and the train stage only") {
  auto r = load_recipe(test::fixture("recipes/minimal.toml"));
  REQUIRE(r);
  CHECK(r->stage("train").max_restarts == 3);
  CHECK(r->stage("train").signal_grace == 120);

  r = load_recipe(test::fixture("recipes/minimal.toml"),
                  {{"stages.train.max_restarts", "0", ""}, {"stages.train.signal_grace", "30", ""}});
  REQUIRE(r);
  CHECK(r->stage("train").max_restarts == 0);
  CHECK(r->stage("train").signal_grace == 30);

  r = load_recipe(test::fixture("recipes/minimal.toml"), {{"stages.train.max_restarts", "-1", ""}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("out of range") != std::string::npos);

  r = load_recipe(test::fixture("recipes/minimal.toml"), {{"stages.train.signal_grace", "\"2m\"", ""}});
  REQUIRE_FALSE(r);

  r = load_recipe(test::fixture("recipes/minimal.toml"), {{"stages.convert.max_restarts", "2", ""}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "max_restarts applies to the train stage only");
  CHECK(r.error().hint == "move it to [stages.train]");

  const auto text =
      "[model]\nlayers = 2\nhidden = 64\nheads = 4\nvocab = 256\nseq_len = 16\n"
      "[cluster]\ninstance = \"cpu\"\nnodes = 2\ncores_per_node = 2\n"
      "[train]\ngbs = 8\nlr = 1e-3\n"
      "[stages.convert]\ncommand = \"true\"\n[stages.precompile]\ncommand = \"true\"\n"
      "[stages.train]\ncommand = \"true\"\n[stages.convert_back]\ncommand = \"true\"\nsignal_grace = 5\n";
  r = load_recipe_text(text, "r.toml");
  REQUIRE_FALSE(r);
  CHECK(r.error().where.starts_with("r.toml:22:"));
}

TEST_CASE("resilience: sbatch arguments of the train stage") {
  CHECK(resilience_sbatch_args({3, 120}) ==
        std::vector<std::string>{"--requeue", "--open-mode=append", "--signal=B:USR1@120"});
  CHECK(resilience_sbatch_args({3, 0}) == std::vector<std::string>{"--requeue", "--open-mode=append"});
}

TEST_CASE("resilience: the wrapped script runs the command in the background and requeues") {
  ScriptInput in;
  in.chain_id = "c";
  in.stage = "train";
  in.run_dir = "/runs/c";
  in.command = "srun train --steps {{total_steps}}\n";
  in.values = {{"total_steps", "10"}};
  in.resilience = Resilience{2, 45};
  auto s = render_job_script(in);
  REQUIRE(s);
  CHECK(s->find("export TRNSLURM_MAX_RESTARTS=2\nexport TRNSLURM_SIGNAL_GRACE=45\n") != std::string::npos);
  const auto open = s->find("\n(\n");
  const auto command = s->find("srun train --steps \"${TRNSLURM_TOTAL_STEPS}\"\n");
  const auto close = s->find("\n) &\n");
  REQUIRE(open != std::string::npos);
  CHECK(open < command);
  CHECK(command < close);
  // USR1 is trapped before the wrapper runs any command (bash's default would end the shell).
  CHECK(s->find("trap 'trn_usr1=1' USR1") < s->find("mkdir"));
  CHECK(s->find("trap 'echo \"$?\" >\"$trn_status\"' EXIT\n") < command);
  CHECK(s->find("scontrol requeue \"$SLURM_JOB_ID\"") > close);
  CHECK(s->find("scancel --signal=TERM \"$SLURM_JOB_ID\"") != std::string::npos);

  in.resilience.reset();
  s = render_job_script(in);
  REQUIRE(s);
  // Without the wrapper only the outcome record every stage has (stage_outcome.sh).
  CHECK(s->find("trn_requeue") == std::string::npos);
  CHECK(s->find("trap 'trn_usr1=1' USR1") == s->rfind("trap 'trn_usr1=1' USR1"));
  CHECK(s->find("trn_outcome running\n") != std::string::npos);
}

TEST_CASE("resilience: the restarts file is parsed line by line, bad lines skipped") {
  const auto events = parse_restarts(
      "{\"event\":\"requeue\",\"cause\":\"time-limit\",\"restart\":0,\"job\":4,\"time\":17,\"checkpoint\":5}"
      "\n"
      "{\"event\":\"restart\",\"cause\":\"time-limit\",\"restart\":1,\"job\":4,\"time\":18,\"resumed_from\":"
      "5}\n"
      "{\"event\":\"restart\",\"cause\":\"slurm-requeue\",\"restart\":2,\"job\":4,\"time\":19,\"resumed_"
      "from\":null}\n"
      "{\"event\":\"gave-up\",\"cau\n"
      "not json\n"
      "{\"event\":\"gave-up\",\"cause\":\"preempted\",\"restart\":3,\"job\":4,\"time\":20,\"max_restarts\":2}"
      "\n");
  REQUIRE(events.size() == 4);
  CHECK(events[0].event == "requeue");
  CHECK(events[0].checkpoint == 5u);
  CHECK_FALSE(events[0].resumed_from);
  CHECK(events[1].resumed_from == 5u);
  CHECK(events[1].restart == 1);
  CHECK_FALSE(events[2].resumed_from);
  CHECK(events[3].max_restarts == 2u);
  CHECK(describe_cause("time-limit") == "time limit (USR1, checkpoint, requeue)");
  CHECK(describe_cause("something-new") == "something-new");
  CHECK(read_restarts("/nonexistent/run").empty());
}

TEST_CASE("resilience: status explains a chain's end by its last gave-up event") {
  CHECK_FALSE(last_gave_up({}));
  auto events = parse_restarts(
      "{\"event\":\"gave-up\",\"cause\":\"preflight\",\"restart\":1,\"job\":4,\"time\":20,"
      "\"nodes\":[\"n1\"],\"max_exclusions\":1}\n"
      "{\"event\":\"restart\",\"cause\":\"time-limit\",\"restart\":2,\"job\":4,\"time\":21}\n"
      "{\"event\":\"gave-up\",\"cause\":\"preempted\",\"restart\":3,\"job\":4,\"time\":22,"
      "\"max_restarts\":2}\n"
      "{\"event\":\"restart\",\"cause\":\"time-limit\",\"restart\":4,\"job\":4,\"time\":23}\n");
  REQUIRE(events.size() == 4);
  const auto last = last_gave_up(events);
  REQUIRE(last);
  CHECK(last->cause == "preempted");
  CHECK(last->time == 22);
  events.erase(events.begin() + 2);
  CHECK(last_gave_up(events)->cause == "preflight");
  events.erase(events.begin());
  CHECK_FALSE(last_gave_up(events));
}

TEST_CASE(
    "resilience: an event appended to the restarts log is read back, and one that cannot be is an error") {
  test::ScratchDir run;
  RestartEvent e;
  e.event = "exclude";
  e.cause = "preflight";
  e.job = 7;
  e.nodes = {"n1"};
  // No logs/ yet: the job's output creates it, and without it the exclusion could not be counted.
  CHECK_FALSE(append_restart(run.path(), e));
  std::filesystem::create_directories(run / "logs");
  REQUIRE(append_restart(run.path(), e));
  e.event = "gave-up";
  REQUIRE(append_restart(run.path(), e));
  const auto back = read_restarts(run.path());
  REQUIRE(back.size() == 2);
  CHECK(back[0].event == "exclude");
  CHECK(back[1].event == "gave-up");
  CHECK(back[1].nodes == std::vector<std::string>{"n1"});
}
