#!/usr/bin/python3
"""A stand-in of the three kubectl commands an exported k8s/run.sh runs, over a cluster whose
MPIJobs end as told.

`apply -f FILE` checks the object as Kubernetes and the MPI Operator would (k8s_rules.problems:
the CRD's recorded schema made strict, and the operator's own rules) and refuses it like kubectl
(a message on stderr, exit 1); applying an object that exists already changes nothing.
`wait -n NS --for=condition=Succeeded --timeout=T mpijob/NAME` succeeds once NAME has succeeded,
times out (exit 1) while it has not; `get -n NS mpijob/NAME -o jsonpath=...` prints its Failed
condition's status. Other arguments are refused. $KUBECTL_STANDIN_FAIL names the stage label of
the MPIJob that fails; every call is appended to $KUBECTL_STANDIN_LOG as a JSON line, and the
cluster's objects are kept in $KUBECTL_STANDIN_LOG.objects.
"""

import json
import os
import sys

import k8s_rules  # noqa: E402

LOG = os.environ["KUBECTL_STANDIN_LOG"]
OBJECTS = LOG + ".objects"


def refuse(text):
    print(f"error: {text}", file=sys.stderr)
    sys.exit(1)


def load():
    if not os.path.exists(OBJECTS):
        return {}
    with open(OBJECTS) as f:
        return json.load(f)


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


def find(words, namespace):
    objects = load()
    if len(words) != 1 or not words[0].startswith("mpijob/"):
        refuse(f"expected one mpijob/NAME, not {words}")
    key = f"{namespace}/{words[0][len('mpijob/'):]}"
    if key not in objects:
        print(f'Error from server (NotFound): mpijobs.kubeflow.org "{words[0]}" not found', file=sys.stderr)
        sys.exit(1)
    return objects[key]


def take(words, name):
    if name not in words or words.index(name) + 1 >= len(words):
        refuse(f"{name} missing")
    i = words.index(name)
    value = words[i + 1]
    del words[i:i + 2]
    return value


def main(argv):
    if not argv:
        refuse("no command")
    command, words = argv[0], list(argv[1:])
    if command == "apply":
        path = take(words, "-f")
        if words:
            refuse(f"unexpected arguments {words}")
        with open(path) as f:
            job = json.load(f)
        found = k8s_rules.problems(job)
        if found:
            refuse(f'error validating "{path}": ' + "; ".join(found))
        objects = load()
        key = f"{job['metadata']['namespace']}/{job['metadata']['name']}"
        created = key not in objects
        if created:
            objects[key] = job
            with open(OBJECTS, "w") as f:
                json.dump(objects, f)
        log({"call": "apply", "name": job["metadata"]["name"], "created": created})
        print(f"mpijob.kubeflow.org/{job['metadata']['name']} {'created' if created else 'unchanged'}")
    elif command == "wait":
        ns = take(words, "-n")
        if take(words, "--for") != "condition=Succeeded":
            refuse("expected --for=condition=Succeeded")
        take(words, "--timeout")
        job = find(words, ns)
        failed = job["metadata"]["labels"]["trnslurm-stage"] == os.environ.get("KUBECTL_STANDIN_FAIL")
        log({"call": "wait", "name": job["metadata"]["name"], "succeeded": not failed})
        if failed:
            refuse(f"timed out waiting for the condition on mpijobs/{job['metadata']['name']}")
        print(f"mpijob.kubeflow.org/{job['metadata']['name']} condition met")
    elif command == "get":
        ns = take(words, "-n")
        if take(words, "-o") != 'jsonpath={.status.conditions[?(@.type=="Failed")].status}':
            refuse("unexpected -o")
        job = find(words, ns)
        failed = job["metadata"]["labels"]["trnslurm-stage"] == os.environ.get("KUBECTL_STANDIN_FAIL")
        log({"call": "get", "name": job["metadata"]["name"]})
        print("True" if failed else "", end="")
    else:
        refuse(f"unknown command {command}")


if __name__ == "__main__":
    # kubectl's --for=X and --timeout=X forms, as run.sh writes them.
    args = []
    for a in sys.argv[1:]:
        if a.startswith(("--for=", "--timeout=")):
            args += a.split("=", 1)
        else:
            args.append(a)
    main(args)
