#!/usr/bin/env python3
"""One table of scripts/bench-research's runs: reads OUT/<set>-<mode>.{score,abstain,cpu}.json and
the runs file OUT/<set>-<mode>.jsonl (each row's job status) and prints markdown."""
import argparse, json, os

QUESTIONS = {"base": "questions.jsonl", "hard": "questions-hard.jsonl",
             "unanswerable": "questions-unanswerable.jsonl"}


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def rows_of(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def fmt(x, digits=2):
    return "—" if x is None else (f"{x:.{digits}f}" if isinstance(x, float) else str(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sets", default="base,hard,unanswerable")
    ap.add_argument("--modes", default="llm,nollm")
    a = ap.parse_args()
    print("| set | LLM | questions | answer recall | gold cited | citation precision | URLs outside the web "
          "| without citations | false abstentions | abstain rate | sources per report | pages fetched "
          "| CPU ms per question |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in a.sets.split(","):
        for m in a.modes.split(","):
            name = os.path.join(a.out, f"{s}-{m}")
            score = load(name + ".score.json")
            if score is None:
                continue
            summary, per_q = score["summary"], {r["id"]: r for r in score["per_question"]}
            cpu = load(name + ".cpu.json") or {}
            abstain = (load(name + ".abstain.json") or {}).get("summary", {})
            answerable = s != "unanswerable"
            false_abstentions = None
            if answerable:
                # an answerable question whose job ended no_answer, or whose report cites nothing
                false_abstentions = sum(
                    1 for r in rows_of(name + ".jsonl")
                    if r.get("status") in ("no_answer", "no_sources")
                    or per_q.get(r["id"], {}).get("n_cited", 0) == 0)
            print(f"| {s} | {'mock' if m == 'llm' else 'none'} | {summary['questions']} "
                  f"| {fmt(summary['answer_recall']) if answerable else '—'} "
                  f"| {fmt(summary['gold_cited']) if answerable else '—'} "
                  f"| {fmt(summary['citation_precision'], 3)} | {summary['hallucinated_citations_total']} "
                  f"| {summary['questions_without_citations']} | {fmt(false_abstentions)} "
                  f"| {fmt(abstain.get('abstain_rate')) if not answerable else '—'} "
                  f"| {fmt(summary['sources_mean'], 1)} | {fmt(summary['pages_fetched_mean'], 1)} "
                  f"| {fmt(cpu.get('cpu_s_per_question', 0) * 1000, 0) if cpu else '—'} |")


if __name__ == "__main__":
    main()
