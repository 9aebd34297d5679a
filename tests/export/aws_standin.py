#!/usr/bin/python3
"""A stand-in of the aws CLI's three Batch commands an exported submit.sh runs.

Each request is checked as AWS Batch checks it (batch_rules.problems: botocore's model and
ParamValidator, and the documented limits) and refused like the CLI refuses one (a message on
stderr, exit 252). Arguments other than those submit.sh gives are refused too. Every call is
appended to $AWS_STANDIN_LOG as a JSON line; $AWS_STANDIN_FAIL_SUBMIT=N makes the Nth submit-job
fail as a service error would (exit 254).
"""

import json
import os
import sys
import uuid

import batch_rules  # noqa: E402


def refuse(text, code=252):
    print(f"aws: error: {text}", file=sys.stderr)
    sys.exit(code)


def options(words, allowed):
    out = {}
    i = 0
    while i < len(words):
        name = words[i]
        if name not in allowed or i + 1 >= len(words):
            refuse(f"unknown or incomplete option {name}")
        out[name] = words[i + 1]
        i += 2
    return out


def read_input(opts):
    source = opts.get("--cli-input-json", "")
    if not source.startswith("file://"):
        refuse("--cli-input-json must be file://PATH here")
    with open(source[len("file://"):]) as f:
        return json.load(f)


def log(entry):
    with open(os.environ["AWS_STANDIN_LOG"], "a") as f:
        f.write(json.dumps(entry) + "\n")


def main(argv):
    if len(argv) < 2 or argv[0] != "batch":
        refuse(f"not a batch command: {' '.join(argv)}")
    command, words = argv[1], argv[2:]
    if command == "register-job-definition":
        opts = options(words, {"--cli-input-json", "--query", "--output"})
        if opts.get("--query") != "jobDefinitionArn" or opts.get("--output") != "text":
            refuse("expected --query jobDefinitionArn --output text")
        params = read_input(opts)
        found = batch_rules.problems("RegisterJobDefinition", params)
        if found:
            refuse("; ".join(found))
        log({"call": command, "params": params})
        print(f"arn:aws:batch:us-east-1:123456789012:job-definition/{params['jobDefinitionName']}:1")
    elif command == "submit-job":
        opts = options(words, {"--cli-input-json", "--job-definition", "--query", "--output", "--depends-on"})
        if opts.get("--query") != "jobId" or opts.get("--output") != "text":
            refuse("expected --query jobId --output text")
        params = read_input(opts)
        if "--job-definition" in opts:
            params["jobDefinition"] = opts["--job-definition"]
        if "--depends-on" in opts:
            key, _, value = opts["--depends-on"].partition("=")
            if key != "jobId" or not value:
                refuse(f"--depends-on {opts['--depends-on']}: expected jobId=ID")
            params["dependsOn"] = [{"jobId": value}]
        found = batch_rules.problems("SubmitJob", params)
        if found:
            refuse("; ".join(found))
        submits = sum(1 for line in open(os.environ["AWS_STANDIN_LOG"]) if '"submit-job"' in line) + 1
        if os.environ.get("AWS_STANDIN_FAIL_SUBMIT") == str(submits):
            refuse("An error occurred (ServerException) when calling the SubmitJob operation", 254)
        job = str(uuid.uuid4())
        log({"call": command, "params": params, "jobId": job})
        print(job)
    elif command == "terminate-job":
        opts = options(words, {"--job-id", "--reason"})
        if not opts.get("--job-id") or not opts.get("--reason"):
            refuse("terminate-job needs --job-id and --reason")
        log({"call": command, "jobId": opts["--job-id"], "reason": opts["--reason"]})
    else:
        refuse(f"unknown command batch {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
