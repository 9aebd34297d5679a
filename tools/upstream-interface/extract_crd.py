#!/usr/bin/env python3
"""Writes the record of a Kubernetes custom resource's schema (docs/upstream.md, docs/export.md):
the openAPIV3Schema of one version of a CustomResourceDefinition, read from a manifest in the
sources of one git revision (the Kubeflow MPI Operator's MPIJob CRD), without its descriptions:
the schema's facts (properties, types, required members, enums, formats, defaults, list and map
types), never its prose. Refuses (exit 2, nothing written) when the manifest, the CRD or the
version is not there. Needs python3-yaml.

  extract_crd.py --repo DIR --rev REV --release NAME --out FILE [--check]
                 [--manifest PATH --version V --package NAME --repository URL]"""

import json
import sys

import yaml


from gitsrc import ExtractError, GitSource  # noqa: E402
from record_io import arguments, write_atomically  # noqa: E402

FORMAT = 1
EXTRACTED_BY = "tools/upstream-interface/extract_crd.py"
DEFAULTS = {"manifest": "manifests/base/kubeflow.org_mpijobs.yaml", "version": "v2beta1",
            "package": "mpi-operator", "repository": "https://github.com/kubeflow/mpi-operator"}
# Keywords whose value is one schema, a list of schemas, or a map of names to schemas.
ONE = ("items", "additionalProperties", "not")
MANY = ("anyOf", "allOf", "oneOf")
NAMED = ("properties", "patternProperties")


def facts(schema, where):
    """The schema without its descriptions (a property named 'description' is kept)."""
    if not isinstance(schema, dict):
        raise ExtractError(f"{where}: a schema object expected")
    out = {}
    for key, value in schema.items():
        if key == "description":
            continue
        if key in ONE and isinstance(value, dict):
            out[key] = facts(value, f"{where}.{key}")
        elif key in MANY:
            out[key] = [facts(v, f"{where}.{key}[{i}]") for i, v in enumerate(value)]
        elif key in NAMED:
            out[key] = {name: facts(v, f"{where}.{key}.{name}") for name, v in value.items()}
        else:
            out[key] = value
    return out


def build(src, manifest, version, package, repository, release):
    docs = [d for d in yaml.safe_load_all(src.read(manifest)) if d]
    crds = [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
    if len(crds) != 1:
        raise ExtractError(f"{manifest}: {len(crds)} CustomResourceDefinitions, one expected")
    spec = crds[0]["spec"]
    found = [v for v in spec.get("versions", []) if v.get("name") == version]
    if not found or "openAPIV3Schema" not in found[0].get("schema", {}):
        raise ExtractError(f"{manifest}: no version {version} with an openAPIV3Schema")
    return {
        "format": FORMAT, "package": package, "repository": repository, "release": release,
        "commit": src.commit, "extracted_by": EXTRACTED_BY,
        "crd": {"manifest": manifest, "name": crds[0]["metadata"]["name"], "group": spec["group"],
                "kind": spec["names"]["kind"], "version": version, "scope": spec["scope"],
                "served": found[0].get("served"), "storage": found[0].get("storage"),
                "subresources": sorted(found[0].get("subresources", {}))},
        "schema": facts(found[0]["schema"]["openAPIV3Schema"], "openAPIV3Schema"),
    }


def main(argv):
    p = arguments("extract_crd.py", "Write a CRD version's schema record.", "git repository of the CRD's project",
                  "revision to read, e.g. a release commit")
    for key, value in DEFAULTS.items():
        p.add_argument(f"--{key}", default=value)
    args = p.parse_args(argv)
    try:
        record = build(GitSource(args.repo, args.rev), args.manifest, args.version, args.package,
                       args.repository, args.release)
    except (ExtractError, yaml.YAMLError, KeyError, TypeError) as e:
        print(f"extract_crd.py: error: {e}\nextract_crd.py: nothing written", file=sys.stderr)
        return 2
    text = json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if not args.check:
        write_atomically(args.out, text)
        return 0
    try:
        with open(args.out, encoding="utf-8") as f:
            same = f.read() == text
    except OSError as e:
        print(f"extract_crd.py: {args.out}: {e.strerror}", file=sys.stderr)
        return 1
    if not same:
        print(f"extract_crd.py: {args.out} differs from what {args.rev} gives: regenerate it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
