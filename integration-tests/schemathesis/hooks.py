"""schemathesis hooks for integration-tests/tests/end_to_end/api_schema.rs (loaded through SCHEMATHESIS_HOOKS).

Each hook drops one failure that positive_data_acceptance ("a schema-valid request is accepted")
cannot judge: it depends on what earlier requests did, or on a rule JSON Schema cannot state.
Everything else still fails the run.
"""

import json

import schemathesis


def _error(response):
    """The API's error body as (code, message), or (None, None)."""
    try:
        detail = json.loads(response.content)["error"]
        return detail["code"], detail["message"]
    except (ValueError, KeyError, TypeError):
        return None, None


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    if failure.code != "ST202":
        return True
    code, message = _error(response)
    # api.max_questions bounds `questions` and `rows` each (their maxItems) and together, which
    # no schema states.
    body = case.body if isinstance(case.body, dict) else {}
    if response.status_code == 413 and body.get("questions") and body.get("rows"):
        return False
    # Generated submissions reuse short Idempotency-Keys with unrelated bodies; the API answers a
    # reuse 422, as draft-ietf-httpapi-idempotency-key-header asks. The body had already passed
    # validation: the key is looked up after it.
    if response.status_code == 422 and code == "idempotency_conflict":
        return False
    # A page cursor is opaque and only valid when this API returned it for that batch; a schema
    # cannot say so, and a generated string is (rightly) a 400.
    if response.status_code == 400 and code == "bad_request" and message.startswith("cursor:"):
        return False
    # Question ids must be unique in a batch (a question without one has its position as id),
    # and metadata at most 4096 bytes as JSON: neither is a rule a schema can state.
    if response.status_code == 422 and code == "invalid_request" and message.startswith("questions["):
        if "ids must be unique in the batch" in message or "bytes as JSON, more than the" in message:
            return False
    # A template names its rows' columns, and comes with rows or a CSV file; a file's lines are
    # questions or JSONL lines (a text format of its own, which JSON Schema does not describe); a job's fields have rules between
    # their keywords (`format` only on a string, `unit` only on a number, `items` only on an
    # array, `enum` values of the field's type, `required` naming fields, 1 to 50 fields): none
    # is a rule a schema can state.
    if response.status_code == 422 and code == "invalid_request":
        if message.startswith(("template and rows:", "rows[", "the template", "file:", "file and rows:")):
            return False
        # A batch holds a question in `questions` or in `rows`: one of two arrays, not each.
        if message == "questions: the batch holds no questions":
            return False
        if "fields: properties" in message or "fields: required" in message or "fields: (schema)" in message:
            return False
    # Whether a string that looks like an http(s) URL is one is the WHATWG URL parser's call
    # (`http://a:99999/` is not), which no schema states.
    if response.status_code == 422 and code == "invalid_request" and "is not an http or https URL" in message:
        return False
    return True


@schemathesis.deserializer("text/csv")
def csv_table(ctx, response):
    """The results export with `format=csv`: a table whose first line is its header."""
    text = response.content.decode("utf-8")
    if not text.startswith("id,query,status"):
        raise ValueError("a CSV page starts with its header")
    return text


@schemathesis.deserializer("application/x-ndjson")
def json_lines(ctx, response):
    """The results export: one JSON object per line, each described by the response's schema.

    Every line must parse; the first is returned for the schema check (the server writes every
    line with the same code, and schemathesis validates one instance per response).
    """
    # Lines end at "\n" only: str.splitlines() would also split at U+0085 or U+2028, which JSON
    # carries unescaped inside strings.
    lines = [json.loads(line) for line in response.content.decode("utf-8").split("\n") if line]
    if not lines:
        raise ValueError("an export page holds at least one line")
    return lines[0]
