"""The client against a real `trawl serve` in front of a real fleet.

Runs only when TRAWL_API_URL and TRAWL_API_TOKEN are set (skipped otherwise); then
TRAWL_TEST_QUESTIONS must hold two questions the fleet can answer with cited reports (simweb's
corpus), one a line. TRAWL_TEST_TIMEOUT bounds each wait in seconds (default 600). It submits
three small batches (one cancelled at once) and one research() question.
"""

import json
import os
import re
import sys
import unittest
import urllib.request
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trawl_client import BatchStatus, Client, TrawlError  # noqa: E402

URL = os.environ.get("TRAWL_API_URL", "")
TOKEN = os.environ.get("TRAWL_API_TOKEN", "")
QUESTIONS = [q.strip() for q in os.environ.get("TRAWL_TEST_QUESTIONS", "").splitlines()
             if q.strip()]
TIMEOUT = float(os.environ.get("TRAWL_TEST_TIMEOUT", "600"))
ENDED_WELL = ("done", "partial")
CITATION = re.compile(r"\[\d+\]")


@unittest.skipUnless(URL and TOKEN, "set TRAWL_API_URL and TRAWL_API_TOKEN to run it")
class Live(unittest.TestCase):
    client: Client
    created: List[str]  # the batches this class submitted, oldest first
    updates: List[BatchStatus]
    final: BatchStatus

    @classmethod
    def setUpClass(cls) -> None:
        if len(QUESTIONS) != 2:
            raise AssertionError("TRAWL_TEST_QUESTIONS must hold 2 questions, one a line; it "
                                 f"holds {len(QUESTIONS)}")
        cls.client = Client(URL, TOKEN, timeout=60)
        questions = [{"query": q, "id": f"q{n}", "metadata": {"n": n}}
                     for n, q in enumerate(QUESTIONS, 1)]
        cls.batch = cls.client.submit(questions)
        cls.created = [cls.batch.batch_id]
        cls.updates = []
        cls.final = cls.client.wait(cls.batch.batch_id, progress=cls.updates.append,
                                    timeout=TIMEOUT)

    def test_progress_was_reported_and_never_went_back(self):
        self.assertTrue(self.updates, "progress was never called")
        self.assertEqual(self.updates[-1], self.final)
        self.assertTrue(self.final.done and not self.final.cancelled, self.final)
        self.assertEqual((self.final.total, self.final.finished), (2, 2))
        for before, after in zip(self.updates, self.updates[1:]):
            for count in ("started", "finished"):
                self.assertLessEqual(getattr(before, count), getattr(after, count), count)
            self.assertLessEqual(sum(before.by_status.values()), sum(after.by_status.values()))
            self.assertLessEqual(before.cost_usd, after.cost_usd)

    def test_every_job_ended_with_a_cited_report(self):
        jobs = list(self.client.jobs(self.batch.batch_id))
        self.assertEqual([j.job_id for j in jobs], [j.job_id for j in self.batch.jobs])
        self.assertEqual([(j.id, j.metadata) for j in jobs], [("q1", {"n": 1}), ("q2", {"n": 2})])
        for summary in jobs:
            job = self.client.job(summary.job_id)
            self.assertIn(job.status, ENDED_WELL, job)
            self.assertRegex(job.report or "", CITATION, f"job {job.id} has no citation")

    def test_results_stream_every_job(self):
        results = list(self.client.results(self.batch.batch_id))
        self.assertEqual([(r.id, r.job_id) for r in results],
                         [(j.id, j.job_id) for j in self.batch.jobs])
        for r in results:
            self.assertIn(r.status, ENDED_WELL)
            self.assertRegex(r.report or "", CITATION)
            self.assertIsNotNone(r.sources)
            self.assertIsNone(r.work_products, "only when asked for")
        with_products = list(self.client.results(self.batch.batch_id, work_products=True))
        self.assertIn("report.md", with_products[0].work_products or {})

    def test_a_work_product_is_fetched_and_parsed(self):
        job = self.client.job(self.batch.jobs[0].job_id)
        self.assertIn("sources.json", job.work_products)
        sources = json.loads(self.client.work_product(job.job_id, "sources.json"))
        self.assertIsInstance(sources, (list, dict))

    def test_a_report_reads_as_html_with_its_citations(self):
        view = self.client.report(self.batch.jobs[0].job_id)
        self.assertIn(view.status, ENDED_WELL)
        self.assertIn('class="cite"', view.html)
        self.assertEqual([c.n for c in view.citations], list(range(1, len(view.citations) + 1)))
        self.assertTrue(all(c.url.startswith("http") for c in view.citations))
        same = list(self.client.jobs(self.batch.batch_id, status=view.status))
        self.assertIn(view.job_id, [j.job_id for j in same])

    def test_the_token_says_what_it_may_do(self):
        token = self.client.token()
        self.assertFalse(token.read_only)
        self.assertTrue(token.id and token.name)

    def test_batches_are_listed_newest_first(self):
        with urllib.request.urlopen(f"{URL.rstrip('/')}/openapi.json", timeout=60) as response:
            served = json.load(response)["paths"]
        if "get" not in served.get("/v1/batches", {}):
            self.skipTest("this server has no GET /v1/batches yet")
        listed = [b.batch_id for b in self.client.batches(limit=2)]
        self.assertEqual(listed[0], self.created[-1], "the newest batch comes first")
        positions = [listed.index(b) for b in self.created]
        self.assertEqual(positions, sorted(positions, reverse=True), "newest first")

    def test_a_cancelled_batch_is_seen_cancelled(self):
        second = self.client.submit(QUESTIONS)
        self.created.append(second.batch_id)
        status = self.client.cancel(second.batch_id)
        self.assertTrue(status.cancelled, status)
        self.assertTrue(self.client.batch(second.batch_id).cancelled)
        final = self.client.wait(second.batch_id, timeout=TIMEOUT)
        self.assertTrue(final.done and final.cancelled, final)
        self.assertTrue(self.client.cancel(second.batch_id).cancelled, "cancelling again is fine")

    def test_research_answers_one_question(self):
        seen: List[BatchStatus] = []
        job = self.client.research(QUESTIONS[0], progress=seen.append, timeout=TIMEOUT)
        self.created.append(job.batch_id)
        self.assertTrue(seen and seen[-1].done)
        self.assertIn(job.status, ENDED_WELL, job)
        self.assertRegex(job.report or "", CITATION)

    def test_a_bad_request_is_a_trawl_error_with_a_code(self):
        with self.assertRaises(TrawlError) as caught:
            self.client.submit([])
        self.assertIn(caught.exception.status, (400, 422), caught.exception)
        self.assertTrue(caught.exception.code and caught.exception.message, caught.exception)

    def test_a_wrong_token_is_refused(self):
        with self.assertRaises(TrawlError) as caught:
            Client(URL, "trawl_not_a_token").batch(self.batch.batch_id)
        self.assertEqual((caught.exception.status, caught.exception.code), (401, "unauthorized"))


if __name__ == "__main__":
    unittest.main()
