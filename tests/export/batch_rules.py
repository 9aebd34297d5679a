"""AWS Batch requests checked as the service would check them, as far as its published model says.

botocore's service model of Batch (Debian's python3-botocore) and its ParamValidator: unknown
keys, types, required members, minimum lengths and values. What ParamValidator leaves out is
checked here: enum values from the same model, and the limits the AWS Batch API reference states
in prose (RetryStrategy: 1 to 10 attempts, at most 5 evaluateOnExit rules; EvaluateOnExit: an
onExitCode of digits that may end with '*'; JobTimeout: at least 60 seconds; SubmitJob: at most
20 dependsOn; NodeProperties: mainNode below numNodes).
"""

import re

import botocore.session
from botocore.validate import ParamValidator

_model = botocore.session.get_session().get_service_model("batch")


def _enums(shape, value, path, out):
    if shape.type_name == "structure" and isinstance(value, dict):
        for key, member in shape.members.items():
            if key in value:
                _enums(member, value[key], f"{path}.{key}", out)
    elif shape.type_name == "list" and isinstance(value, list):
        for i, item in enumerate(value):
            _enums(shape.member, item, f"{path}[{i}]", out)
    elif shape.type_name == "map" and isinstance(value, dict):
        for key, item in value.items():
            _enums(shape.value, item, f"{path}.{key}", out)
    elif shape.type_name == "string" and shape.enum and value not in shape.enum:
        out.append(f"{path}: {value!r} is not one of {', '.join(shape.enum)}")


def _limits(params, out):
    retry = params.get("retryStrategy")
    if retry is not None:
        attempts = retry.get("attempts")
        if attempts is not None and not 1 <= attempts <= 10:
            out.append(f"retryStrategy.attempts: {attempts} is not between 1 and 10")
        rules = retry.get("evaluateOnExit", [])
        if len(rules) > 5:
            out.append(f"retryStrategy.evaluateOnExit: {len(rules)} rules, at most 5")
        if rules and attempts is None:
            out.append("retryStrategy: evaluateOnExit needs attempts")
        for i, rule in enumerate(rules):
            code = rule.get("onExitCode")
            if code is not None and (len(code) > 512 or not re.fullmatch(r"[0-9]*\*?", code) or code == ""):
                out.append(f"retryStrategy.evaluateOnExit[{i}].onExitCode: {code!r} is not digits ending with an optional *")
    timeout = params.get("timeout", {}).get("attemptDurationSeconds")
    if timeout is not None and timeout < 60:
        out.append(f"timeout.attemptDurationSeconds: {timeout} is under 60")
    if len(params.get("dependsOn", [])) > 20:
        out.append(f"dependsOn: {len(params['dependsOn'])} jobs, at most 20")
    nodes = params.get("nodeProperties")
    if nodes is not None and not 0 <= nodes.get("mainNode", 0) < nodes.get("numNodes", 0):
        out.append(f"nodeProperties.mainNode: {nodes.get('mainNode')} is not below numNodes {nodes.get('numNodes')}")


def problems(operation, params):
    """Every reason AWS Batch would refuse `params` as the input of `operation`, as text."""
    shape = _model.operation_model(operation).input_shape
    out = []
    report = ParamValidator().validate(params, shape)
    if report.has_errors():
        return [report.generate_report()]  # the limits below read values of the model's types
    _enums(shape, params, operation, out)
    _limits(params, out)
    return out
