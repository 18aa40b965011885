#!/usr/bin/env python3
"""Answers as data on real pages: the research benchmark's questions whose answers are numbers or
names, each asked for one field as a user would write it, scored by the benchmark's answer
phrases. Two roles:

  bench_research_fields.py wrap ARGS...   stands in for `trawl` under the benchmark's run.sh:
      `run QUESTION --config F` becomes `run QUESTION --config F --fields SCHEMA` (the schema
      for the question's form, below) with TRAWL_FIELDS_BIN, the real binary; a question of
      another form runs without fields.
  bench_research_fields.py score --questions Q.jsonl --runs RUNS.jsonl
      reads each run's answer.json (run_trawl.py records the job's folder) and prints one line
      of JSON: questions asked for a field, found and right, found and wrong, not found,
      conflicts, and accuracy (right / asked).

The field, by the question's form: "who" → `person` (text); "how much" → `amount` (number);
"how many <things> did…" → `<things>` (integer, up to three words); "what percentage" → `percentage` (number); "what
year" / "in which year" → `year` (integer); "when" → `date` (text, format date). A value is
right when every answer phrase is in it (text; a date's year in it), or a phrase's number, times
one, a thousand, a million or a billion, is it (numbers within 0.5 %).
"""

import json
import os
import re
import sys
import tempfile


def field_for(question):
    q = question.strip().lower()
    m = re.match(r"how many ((?:[a-z'-]+ ){0,2}?[a-z'-]+) (?:are|is|did|does|do|were|was|have|has|had|will|can|could)\b", q)
    m = m or re.match(r"how many ([a-z'-]+)", q)
    if m:
        return m.group(1), {"type": "integer"}
    if re.match(r"(in )?(what|which) year\b", q):
        return "year", {"type": "integer"}
    if q.startswith("who "):
        return "person", {"type": "string", "description": "the person's name"}
    if q.startswith("how much"):
        return "amount", {"type": "number"}
    if re.match(r"(what|which) (percentage|percent|share)\b", q):
        return "percentage", {"type": "number"}
    if q.startswith("when "):
        return "date", {"type": "string", "format": "date"}
    return None


def wrap(args):
    real = os.environ["TRAWL_FIELDS_BIN"]
    if len(args) >= 2 and args[0] == "run":
        asked = field_for(args[1])
        if asked:
            name, spec = asked
            schema = {"type": "object", "properties": {name: spec}}
            fd, path = tempfile.mkstemp(prefix="fields-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(schema, f)
            args = args + ["--fields", path]
    os.execv(real, [real] + args)


def number(text):
    m = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    return float(m.group(0).replace(",", "")) if m else None


def right(value, phrases):
    def one(phrase):
        alternatives = phrase if isinstance(phrase, list) else [phrase]
        for a in alternatives:
            if isinstance(value, str):
                if a.lower() in value.lower() or (a[:4].isdigit() and value.startswith(a[:4])):
                    return True
            elif isinstance(value, (int, float)):
                n = number(a)
                if n is not None and any(abs(n * s - value) <= 0.005 * abs(value or 1)
                                         for s in (1, 1e3, 1e6, 1e9)):
                    return True
        return False
    return all(one(p) for p in phrases)


def score(questions, runs):
    qs = {q["id"]: q for q in map(json.loads, open(questions, encoding="utf-8")) if q}
    out = {"asked": 0, "right": 0, "wrong": 0, "not_found": 0, "conflict": 0, "no_answer_json": 0}
    for row in map(json.loads, open(runs, encoding="utf-8")):
        q = qs.get(row["id"])
        asked = q and field_for(q["question"])
        if not asked:
            continue
        out["asked"] += 1
        path = os.path.join(row.get("work_products") or "", "answer.json")
        try:
            answer = json.load(open(path, encoding="utf-8"))
        except (OSError, ValueError):
            out["no_answer_json"] += 1
            continue
        field = answer["fields"][asked[0]]
        status = field["status"]
        if status == "found":
            out["right" if right(field["value"], q["answers"]) else "wrong"] += 1
        else:
            out[status] += 1
    out["accuracy"] = round(out["right"] / max(out["asked"], 1), 3)
    print(json.dumps(out))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "wrap":
        wrap(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "score":
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("--questions", required=True)
        ap.add_argument("--runs", required=True)
        a = ap.parse_args(sys.argv[2:])
        score(a.questions, a.runs)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
