"""Every committed interfaces/*.json is well-formed (tools/upstream-interface/record_format.py),
and the check refuses hand-broken copies of them."""

import copy
import glob
import json
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

import record_format  # noqa: E402

RECORDS = sorted(glob.glob(os.path.join(ROOT, "interfaces", "*.json")))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def script_records():
    return [p for p in RECORDS if "scripts" in load(p)]


class CommittedRecords(unittest.TestCase):
    def test_there_are_records(self):
        names = [os.path.basename(p) for p in RECORDS]
        self.assertIn("neuronx-distributed-2.29.json", names)
        self.assertIn("neuronx-distributed-2.28.json", names)

    def test_each_is_well_formed(self):
        for path in RECORDS:
            with self.subTest(record=os.path.basename(path)):
                self.assertEqual(record_format.problems(load(path)), [])

    def test_file_name_is_package_and_release(self):
        for path in RECORDS:
            record = load(path)
            with self.subTest(record=os.path.basename(path)):
                self.assertEqual(os.path.basename(path), f"{record['package']}-{record['release']}.json")

    def test_written_by_the_extractor_format(self):
        for path in RECORDS:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            with self.subTest(record=os.path.basename(path)):
                self.assertEqual(text, json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n")


class BrokenCopies(unittest.TestCase):
    """Each hand-made break of a real record is caught, with where it is."""

    def setUp(self):
        self.record = load(os.path.join(ROOT, "interfaces", "neuronx-distributed-2.29.json"))
        self.script = "examples/training/llama/tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py"

    def broken(self, change):
        record = copy.deepcopy(self.record)
        change(record)
        return record_format.problems(record)

    def assertCaught(self, change, text):
        found = self.broken(change)
        self.assertTrue(any(text in p for p in found), f"{text!r} not in {found}")

    def test_missing_commit(self):
        self.assertCaught(lambda r: r.pop("commit"), "record: missing 'commit'")

    def test_short_commit(self):
        self.assertCaught(lambda r: r.update(commit="fbac349"), "commit: a full 40-hex commit hash expected")

    def test_unknown_parse_mode(self):
        self.assertCaught(lambda r: r["scripts"][self.script].update(parse="lenient"),
                          "parse must be 'strict' or 'known'")

    def test_flag_without_type_key(self):
        self.assertCaught(lambda r: r["scripts"][self.script]["flags"][0].pop("type"), "missing 'type'")

    def test_required_as_string(self):
        self.assertCaught(lambda r: r["scripts"][self.script]["flags"][0].update(required="yes"),
                          ".required: true or false expected")

    def test_duplicate_option(self):
        def dup(r):
            flags = r["scripts"][self.script]["flags"]
            flags.append(copy.deepcopy(flags[0]))
        self.assertCaught(dup, "is recorded twice")

    def test_bad_nargs(self):
        self.assertCaught(lambda r: r["scripts"][self.script]["flags"][0].update(nargs="many"), "nargs must be")

    def test_launcher_running_nothing_recorded(self):
        def retarget(r):
            next(iter(r["launchers"].values()))["runs"] = "elsewhere.py"
        self.assertCaught(retarget, "neither a recorded script nor launcher")

    def test_empty_log_pieces(self):
        def empty(r):
            next(iter(r["log_formats"].values()))["pieces"] = []
        self.assertCaught(empty, "no pieces")

    def test_unknown_top_level_key(self):
        self.assertCaught(lambda r: r.update(flags=[]), "unknown key 'flags'")


class BrokenToolCopies(unittest.TestCase):
    """The same for the record of neuron_parallel_compile, read from documentation pages."""

    def setUp(self):
        self.record = load(os.path.join(ROOT, "interfaces", "neuron_parallel_compile-2.29.json"))

    def broken(self, change):
        record = copy.deepcopy(self.record)
        change(record)
        return record_format.problems(record)

    def test_source_outside_the_recorded_pages(self):
        found = self.broken(lambda r: r["tool"]["cache"].update(default_location_source="elsewhere.rst:3"))
        self.assertIn("tool.cache.default_location_source: 'elsewhere.rst:3' is not a recorded page:line", found)

    def test_source_without_a_line(self):
        def drop_line(r):
            r["tool"]["rules"][0]["source"] = r["tool"]["rules"][0]["source"].split(":")[0]
        self.assertTrue(any("is not a recorded page:line" in p for p in self.broken(drop_line)))

    def test_cache_without_default(self):
        found = self.broken(lambda r: r["tool"]["cache"].pop("default_location"))
        self.assertIn("tool.cache: missing 'default_location'", found)

    def test_tool_record_with_scripts_key(self):
        found = self.broken(lambda r: r.update(scripts={}))
        self.assertIn("record: unknown key 'scripts'", found)


if __name__ == "__main__":
    unittest.main(verbosity=2)
