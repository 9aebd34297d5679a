"""MPIJobs checked as Kubernetes and the MPI Operator would check them, as far as their published
sources say (docs/export-k8s.md).

The schema: the MPIJob CRD's openAPIV3Schema of kubeflow/mpi-operator 0.8.2, recorded by
tools/upstream-interface/extract_crd.py in interfaces/k8s/, checked with python3-jsonschema, made
strict: every object schema that lists its properties refuses any other key (the API server
prunes unknown fields of a structural schema, and kubectl's default field validation, Strict,
refuses them). The schema covers the whole pod template (containers, volumes, resources, ...);
its top-level metadata is only `type: object`, so the ObjectMeta keys an export writes are
checked here (name, namespace, labels; anything else refused).

What only the operator enforces (pkg/apis/kubeflow/validation/validation.go at that commit): a
Launcher replica spec with exactly one replica, Worker replicas of at least one when given, each
replica's restartPolicy Never or OnFailure and at least one container, slotsPerWorker given and
not negative, an sshAuthMountPath, mpiImplementation OpenMPI, Intel or MPICH, runPolicy's
cleanPodPolicy None, Running or All, its counts not negative, and the last worker's host name
`<name>-worker-<replicas-1>` a DNS-1035 label. And what the API server checks of names and
labels (apimachinery's validation: DNS-1123 subdomains and labels, label keys and values), that
every volume mount names a volume of the pod, and that an extended resource (the Neuron and EFA
device plugins') is a whole number with requests equal to limits.
"""

import copy
import json
import os
import re

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD = os.path.join(HERE, "..", "..", "interfaces", "k8s", "mpi-operator-0.8.2.json")

DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
RESTART_POLICIES = {"Never", "OnFailure"}
CLEAN_POLICIES = {"None", "Running", "All"}
IMPLEMENTATIONS = {"OpenMPI", "Intel", "MPICH"}
EXTENDED = ("aws.amazon.com/neuron", "vpc.amazonaws.com/efa")
META_KEYS = {"name", "namespace", "labels", "annotations"}


def _strict(schema):
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


with open(RECORD, encoding="utf-8") as _f:
    record = json.load(_f)
_validator = jsonschema.Draft4Validator(_strict(record["schema"]))


def dns1123_subdomain(s):
    return isinstance(s, str) and 0 < len(s) <= 253 and all(DNS1123_LABEL.match(p) and len(p) <= 63 for p in s.split("."))


def _labels(where, labels, out):
    for key, value in (labels or {}).items():
        prefix, _, name = key.rpartition("/")
        if (prefix and not dns1123_subdomain(prefix)) or len(name) > 63 or not LABEL_NAME.match(name):
            out.append(f"{where}: label key {key!r} is not a qualified name")
        if not isinstance(value, str) or len(value) > 63 or not LABEL_VALUE.match(value):
            out.append(f"{where}: label value {value!r} of {key!r} is not a label value")


def _pod(where, template, out):
    _labels(f"{where}.metadata.labels", template.get("metadata", {}).get("labels"), out)
    spec = template.get("spec", {})
    containers = spec.get("containers", [])
    if not containers:
        out.append(f"{where}.spec.containers: at least one container (the operator's rule)")
    volumes = [v.get("name") for v in spec.get("volumes", [])]
    for v in volumes:
        if not isinstance(v, str) or not DNS1123_LABEL.match(v) or len(v) > 63:
            out.append(f"{where}.spec.volumes: {v!r} is not a DNS-1123 label")
    if len(set(volumes)) != len(volumes):
        out.append(f"{where}.spec.volumes: names repeated")
    _labels(f"{where}.spec.nodeSelector", spec.get("nodeSelector"), out)
    for i, c in enumerate(containers):
        at = f"{where}.spec.containers[{i}]"
        if not DNS1123_LABEL.match(c.get("name", "")) or len(c["name"]) > 63:
            out.append(f"{at}.name: {c.get('name')!r} is not a DNS-1123 label")
        for m in c.get("volumeMounts", []):
            if m.get("name") not in volumes:
                out.append(f"{at}.volumeMounts: {m.get('name')!r} names no volume of the pod")
        for e in c.get("env", []):
            if not ENV_NAME.match(e.get("name", "")):
                out.append(f"{at}.env: {e.get('name')!r} is not an environment variable name")
        resources = c.get("resources", {})
        for kind in ("limits", "requests"):
            for name, value in resources.get(kind, {}).items():
                if name in EXTENDED and not re.fullmatch(r"[0-9]+", str(value)):
                    out.append(f"{at}.resources.{kind}.{name}: {value!r} is not a whole number")
        for name in EXTENDED:
            limit, request = resources.get("limits", {}).get(name), resources.get("requests", {}).get(name)
            if request is not None and limit != request:
                out.append(f"{at}.resources: {name} requested {request!r} but limited to {limit!r}")


def _nonnegative(where, value, out):
    if value is not None and value < 0:
        out.append(f"{where}: {value} is negative")


def _operator(job, out):
    meta = job.get("metadata", {})
    name = meta.get("name", "")
    spec = job.get("spec", {})
    replicas = spec.get("mpiReplicaSpecs", {})
    for key in set(replicas) - {"Launcher", "Worker"}:
        out.append(f"spec.mpiReplicaSpecs: {key!r} is neither Launcher nor Worker")
    launcher = replicas.get("Launcher")
    if launcher is None:
        out.append("spec.mpiReplicaSpecs.Launcher: required")
    for kind, rs in replicas.items():
        at = f"spec.mpiReplicaSpecs.{kind}"
        if not isinstance(rs, dict):
            continue
        if "replicas" not in rs:
            out.append(f"{at}.replicas: required")
        if rs.get("restartPolicy") not in RESTART_POLICIES:
            out.append(f"{at}.restartPolicy: {rs.get('restartPolicy')!r} is not one of {sorted(RESTART_POLICIES)}")
        _pod(f"{at}.template", rs.get("template", {}), out)
    if launcher is not None and launcher.get("replicas", 1) != 1:
        out.append(f"spec.mpiReplicaSpecs.Launcher.replicas: {launcher.get('replicas')}, must be 1")
    worker = replicas.get("Worker")
    if worker is not None and worker.get("replicas") is not None and worker["replicas"] <= 0:
        out.append(f"spec.mpiReplicaSpecs.Worker.replicas: {worker['replicas']}, must be at least 1")
    last = max(1, (worker or {}).get("replicas") or 1) - 1
    host = f"{name}-worker-{last}"
    if len(host) > 63 or not DNS1035.match(host):
        out.append(f"metadata.name: the last worker's host name {host!r} is not a DNS-1035 label")
    if spec.get("slotsPerWorker") is None:
        out.append("spec.slotsPerWorker: required")
    _nonnegative("spec.slotsPerWorker", spec.get("slotsPerWorker"), out)
    if not spec.get("sshAuthMountPath"):
        out.append("spec.sshAuthMountPath: required")
    if spec.get("mpiImplementation") not in IMPLEMENTATIONS:
        out.append(f"spec.mpiImplementation: {spec.get('mpiImplementation')!r} is not one of {sorted(IMPLEMENTATIONS)}")
    policy = spec.get("runPolicy", {})
    if policy.get("cleanPodPolicy") not in CLEAN_POLICIES:
        out.append(f"spec.runPolicy.cleanPodPolicy: {policy.get('cleanPodPolicy')!r} is not one of {sorted(CLEAN_POLICIES)}")
    for key in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        _nonnegative(f"spec.runPolicy.{key}", policy.get(key), out)


def problems(job):
    """Every reason Kubernetes or the MPI Operator would refuse `job`, as text."""
    out = [f"{'.'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
           for e in sorted(_validator.iter_errors(job), key=lambda e: list(map(str, e.absolute_path)))]
    if out:
        return out  # the rules below read values of the schema's types
    if job.get("apiVersion") != f"{record['crd']['group']}/{record['crd']['version']}" or job.get("kind") != record["crd"]["kind"]:
        out.append(f"apiVersion/kind: {job.get('apiVersion')} {job.get('kind')} is not the recorded CRD's")
    meta = job.get("metadata", {})
    for key in set(meta) - META_KEYS:
        out.append(f"metadata: {key!r} is not written by an export (checked: {sorted(META_KEYS)})")
    if not dns1123_subdomain(meta.get("name")):
        out.append(f"metadata.name: {meta.get('name')!r} is not a DNS-1123 subdomain")
    if not isinstance(meta.get("namespace"), str) or not DNS1123_LABEL.match(meta["namespace"]) or len(meta["namespace"]) > 63:
        out.append(f"metadata.namespace: {meta.get('namespace')!r} is not a DNS-1123 label")
    _labels("metadata.labels", meta.get("labels"), out)
    _operator(job, out)
    return out


def broken(job, path, value):
    """A copy of `job` with the member at `path` set to `value` (None: removed)."""
    out = copy.deepcopy(job)
    at = out
    for key in path[:-1]:
        at = at[key]
    if value is None:
        del at[path[-1]]
    else:
        at[path[-1]] = value
    return out
