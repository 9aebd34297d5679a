# `trnslurm instances`, and the instance types plan reads: the bundled table, a site's file
# (named by the plugstack line, as the plugin reads it) and a recipe's own [instances]; what no
# public source confirms marked; bad definitions refused at their position. No Slurm needed.
source "$(dirname "$0")/lib.sh"
cd "$work"
# No cluster here: a slurm.conf of our own, whose plugstack.conf names the site's file.
export SLURM_CONF=$work/slurm.conf
printf 'PlugStackConfig=%s/plugstack.conf\n' "$work" >slurm.conf
: >plugstack.conf

run instances
expect_eq "instances exit" 0 "$rc"
for t in trn1.2xlarge trn1.32xlarge trn1n.32xlarge trn2.3xlarge trn2.48xlarge trn2u.48xlarge trn3.48xlarge cpu; do
  expect_contains "instances lists $t" "$t " "$out"
done
expect_contains "trn2.48xlarge row" "trn2.48xlarge   bundled       16      8  1, 2 (2)       96      667    192      2048   16      3200      -" "$out"
expect_contains "unconfirmed figures are marked" "trn3.48xlarge   bundled      16*      8  1, 2 (2)      144      671   192*" "$out"
expect_contains "unknown figures are marked" "trn2.3xlarge    bundled       1*      8  1, 2 (2)       96      667      ?" "$out"
# The Instances page shows every bundled type, its devices and cores as the table has them.
page=$(cat "$TRNSLURM_SOURCE_DIR/docs/instances.md")
run instances --json
for row in $(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys
for t in json.load(sys.stdin)["instances"]:
  f=t["figures"]
  if "devices" in f: print("|`%s`|%s|%s|" % (t["name"], f["devices"]["value"], f["cores_per_device"]["value"]))'); do
  expect_contains "docs/instances.md has $row" "$row" "$(printf '%s' "$page" | tr -d ' *')"
done
run instances trn2u.48xlarge
expect_contains "one type: a confirmed figure and its page" \
  "ultraserver_nodes                 4  confirmed    Neuron docs: Amazon EC2 Trn2 architecture (https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/about-neuron/arch/neuron-hardware/trn2-arch.html" "$out"
run instances trn3.48xlarge
expect_contains "one type: an unconfirmed figure and why" "efa_devices                 unknown  UNCONFIRMED" "$out"
run instances trn3.48xlarge --json
expect_eq "one type --json exit" 0 "$rc"
expect_eq "one type --json" "trn3.48xlarge bundled 144 trainium3 false" \
  "$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; t=json.load(sys.stdin); f=t["figures"]
print(t["name"], t["origin"], int(f["hbm_gib_per_device"]["value"]), f["hbm_gib_per_device"]["source"], str(f["devices"]["confirmed"]).lower())')"
run instances trn3.48xlrge
expect_eq "unknown type exit" 2 "$rc"
expect_contains "unknown type did-you-mean" "did you mean 'trn3.48xlarge'?" "$err"

# A site's file, named by instances= on the plugin's plugstack line: its types join the table,
# and one that shadows a bundled type says so.
cat >site.toml <<'TOML'
[instances."trnx.12xlarge"]
target = "trn3"
devices = 4
cores_per_device = 8
lnc = [1, 2]
lnc_default = 1
hbm_gib_per_device = 144
ultraserver_nodes = 2

[instances."trn1.2xlarge"]
target = "trn1"
devices = 1
cores_per_device = 2
lnc = [1]
lnc_default = 1
hbm_gib_per_device = 32
vcpus = 8
TOML
chmod 644 site.toml
printf 'required /usr/lib/slurm/trnslurm.so instances=%s/site.toml\n' "$work" >plugstack.conf
run instances --json
expect_eq "site --json exit" 0 "$rc"
expect_eq "site types and their origin" "trnx.12xlarge site; trn1.2xlarge site; trn2.48xlarge bundled" \
  "$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); o={t["name"]: t["origin"] for t in j["instances"]}
print("; ".join(f"{n} {o[n]}" for n in ("trnx.12xlarge", "trn1.2xlarge", "trn2.48xlarge")))')"
run instances
expect_contains "the shadowing note" "note: $work/site.toml:10:12: [instances.\"trn1.2xlarge\"] replaces the bundled definition" "$out"
expect_contains "a site figure is unconfirmed" "trnx.12xlarge   site          4*" "$out"

# plan reads the same table: the site's type, its LNC-dependent figures, its UltraServer.
run init llama3-8b-trn2
run plan --samples 100000 --set cluster.instance=trnx.12xlarge --set cluster.lnc=2 --set train.tp=16 \
  --set cluster.nodes=2 --set train.pp=2 --set 'slurm.ultraserver_features=["us1","us2"]' --json
expect_eq "plan on the site's type" 0 "$rc"
expect_eq "plan: cores, origin, placement" "16 site constraint --constraint=[us1|us2] 2" \
  "$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; p=json.load(sys.stdin); pl=p["placement"]
print(p["cores_per_node"], p["instance_origin"], pl["method"], " ".join(pl["sbatch_args"]), pl["group_nodes"])')"
run plan --samples 100000 --set cluster.instance=trnx.12xlarge --set cluster.lnc=2 --set train.tp=16 \
  --set cluster.nodes=2 --set train.pp=2 --set 'slurm.ultraserver_features=["us1","us2"]'
expect_contains "plan says which placement and why" \
  "placement" "$out"
expect_contains "plan says why" "no --segment (added in 24.05)" "$out"
expect_contains "plan warns what no public source confirms" "trnx.12xlarge (site): no public source confirms devices = 4" "$err"

# A bad site file stops plan and instances with its position; the plugin would fail the jobs.
printf '[instances."bad.one"]\ntarget = "trn3"\ndevices = "4"\n' >site.toml
run instances
expect_eq "bad site file exit" 2 "$rc"
expect_contains "bad site file position" "$work/site.toml:3:11: instances.\"bad.one\".devices must be a whole number, got a string" "$err"
run plan --samples 1000
expect_eq "plan with a bad site file" 2 "$rc"
chmod 666 site.toml
run instances
expect_eq "a site file others may write" 2 "$rc"
expect_contains "not trusted" "not trusted" "$err"
: >plugstack.conf

# A recipe's own type, in the recipe itself.
cat >>trnslurm.toml <<'TOML'

[instances."trn9.1xlarge"]
target = "trn3"
devices = 2
cores_per_device = 8
lnc = [2]
lnc_default = 2
hbm_gib_per_device = 144
TOML
run instances
expect_contains "the recipe's type" "trn9.1xlarge    recipe        2*" "$out"
run plan --samples 100000 --set cluster.instance=trn9.1xlarge --set train.tp=8
expect_eq "plan on the recipe's type" 0 "$rc"
expect_contains "its cores" "nodes 1 x cores_per_node 8 (trn9.1xlarge, lnc 2)" "$out"
printf '\n[instances."trn9.2xlarge"]\ntarget = "trn3"\nlnc = [2, 3]\n' >>trnslurm.toml
run plan --samples 1000
expect_eq "a bad type in the recipe" 2 "$rc"
expect_contains "its position" "trnslurm.toml:" "$err"
finish
