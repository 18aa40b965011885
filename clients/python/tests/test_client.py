"""The client against a scripted stand-in for `trawl serve` on a local port: errors, retries,
the version check, paging, the results export (gzip, broken pages) and following a batch
(reconnecting event streams, polling, deadlines). Sleeps are recorded, not slept."""

import gzip
import json
import os
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple
from unittest import mock
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trawl_client  # noqa: E402
from trawl_client import Client, TrawlDecodeError, TrawlError, TrawlTimeoutError  # noqa: E402
from trawl_client import TrawlVersionError  # noqa: E402


def status(finished: int, total: int = 2, **extra: Any) -> Dict[str, Any]:
    return {"batch_id": "b1", "created_at": "2025-01-01T00:00:00Z", "total": total,
            "started": total, "finished": finished, "by_status": {"done": finished},
            "cancelled": False, "done": finished == total, "cost_usd": 0.01 * finished,
            "unused_sources": {}, **extra}


def result(n: int) -> Dict[str, Any]:
    return {"id": str(n), "metadata": {}, "job_id": f"j{n}", "query": f"q{n}", "status": "done",
            "writer": "llm", "duration_ms": 5, "cost_usd": 0.0, "report": "[1]", "sources": []}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "Fake"

    def log_message(self, *args: Any) -> None:
        pass

    def dispatch(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.server.requests.append((self.command, url.path, self.query, dict(self.headers), body))
        route = self.server.routes.get((self.command, url.path))
        if route is None and url.path == "/openapi.json":
            return self.json(200, {"openapi": "3.1.0", "info": {"version": "0.1.3"}})
        if route is None:
            return self.json(404, {"error": {"code": "not_found", "message": "no such endpoint"}})
        route(self)

    do_GET = do_POST = do_DELETE = dispatch

    def json(self, code: int, value: Any, headers: Tuple[Tuple[str, str], ...] = ()) -> None:
        self.raw(code, json.dumps(value).encode(), "application/json", headers)

    def raw(self, code: int, data: bytes, kind: str, headers: Tuple[Tuple[str, str], ...] = ()
            ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def chunked(self, kind: str, headers: Tuple[Tuple[str, str], ...] = ()) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()

    def chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end(self, complete: bool = True) -> None:
        """Ends a chunked answer, or (not `complete`) breaks it off as a failing server does."""
        if complete:
            self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True


class Fake(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.routes: Dict[Tuple[str, str], Callable[[Handler], None]] = {}
        self.requests: List[Tuple[str, str, Dict[str, str], Dict[str, str], Any]] = []

    def sequence(self, method: str, path: str, *answers: Callable[[Handler], None]) -> None:
        """`path` answers with each of `answers` in turn, then the last one again."""
        left = list(answers)
        self.routes[(method, path)] = lambda h: (left.pop(0) if len(left) > 1 else left[0])(h)

    def paths(self, method: str = "") -> List[str]:
        return [p for m, p, *_ in self.requests if not method or m == method]


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.fake = Fake()
        threading.Thread(target=self.fake.serve_forever, args=(0.01,), daemon=True).start()
        self.addCleanup(self.fake.server_close)
        self.addCleanup(self.fake.shutdown)
        self.url = f"http://127.0.0.1:{self.fake.server_address[1]}"
        self.client = Client(self.url, "secret-token", timeout=5)
        sleep = mock.patch("trawl_client.client.time.sleep")
        self.sleeps = sleep.start().call_args_list
        self.addCleanup(sleep.stop)

    def slept(self) -> List[float]:
        return [c.args[0] for c in self.sleeps]


class Basics(ClientTest):
    def test_configuration_comes_from_the_environment_and_the_token_is_never_shown(self):
        env = {"TRAWL_API_URL": self.url + "/", "TRAWL_API_TOKEN": " t0k "}
        with mock.patch.dict(os.environ, env):
            client = Client()
        self.assertEqual(client.base_url, self.url)
        self.assertNotIn("t0k", repr(client))
        with mock.patch.dict(os.environ, {}, clear=True), self.assertRaises(ValueError):
            Client(self.url)
        with self.assertRaises(ValueError):
            Client("ftp://h", "t")

    def test_a_submission_is_sent_in_the_apis_shape_with_one_key_for_its_retries(self):
        created = {"batch_id": "b1", "created_at": "t",
                   "jobs": [{"job_id": "j1", "id": "1", "query": "a"}]}
        rate_limited = {"error": {"code": "rate_limited", "message": "slow down"}}
        self.fake.sequence(
            "POST", "/v1/batches",
            lambda h: h.json(429, rate_limited, (("Retry-After", "1"),)),
            lambda h: h.json(503, {"error": {"code": "unavailable", "message": "try again"}}),
            lambda h: h.json(201, created, (("X-Future", "1"),)))
        batch = self.client.submit(
            ["a", {"query": "b", "id": "x", "options": trawl_client.JobOptions(max_urls=2)},
             trawl_client.Question("c", metadata={"k": 1})],
            options={"max_level": 1}, budget_usd=2.5)
        self.assertEqual((batch.batch_id, batch.jobs[0].job_id), ("b1", "j1"))
        posts = [r for r in self.fake.requests if r[0] == "POST"]
        self.assertEqual(len(posts), 3)
        self.assertEqual(posts[0][4], {
            "questions": [{"query": "a"}, {"query": "b", "id": "x", "options": {"max_urls": 2}},
                          {"query": "c", "metadata": {"k": 1}}],
            "options": {"max_level": 1}, "budget_usd": 2.5})
        keys = {r[3]["Idempotency-Key"] for r in posts}
        self.assertEqual(len(keys), 1, "every attempt carries the same key")
        self.assertEqual(posts[0][3]["Authorization"], "Bearer secret-token")
        self.assertEqual(posts[0][3]["Content-Type"], "application/json")
        self.assertEqual(self.slept(), [1.0, 1.0])  # Retry-After, then the back-off
        self.client.submit("one", idempotency_key="mine")
        self.assertEqual(self.fake.requests[-1][3]["Idempotency-Key"], "mine")
        self.assertEqual(self.fake.requests[-1][4], {"questions": [{"query": "one"}]})

    def test_a_template_with_rows_and_fields_comes_back_as_rows(self):
        created = {"batch_id": "b1", "created_at": "t",
                   "jobs": [{"job_id": "j1", "id": "1", "query": "Where is Acme?"}]}
        self.fake.sequence("POST", "/v1/batches", lambda h: h.json(201, created))
        fields = {"type": "object", "properties": {"hq": {"type": "string"}}}
        self.client.submit(template="Where is {company}?", rows=[{"company": "Acme"}],
                           options={"fields": fields})
        self.assertEqual(self.fake.requests[-1][4], {
            "questions": [], "template": "Where is {company}?", "rows": [{"company": "Acme"}],
            "options": {"fields": fields}})
        # A CSV file as it is, for the server to read as `trawl submit` does.
        self.fake.sequence("POST", "/v1/batches", lambda h: h.json(201, created))
        self.client.submit(template="Where is {company}?", file="company\nAcme\n")
        self.assertEqual(self.fake.requests[-1][4], {
            "questions": [], "file": "company\nAcme\n", "template": "Where is {company}?"})
        job = trawl_client.JobResult.from_json({
            "id": "1", "metadata": {"company": "Acme"}, "job_id": "j1", "query": "Where is Acme?",
            "status": "done", "sources": [],
            "answer": {"by": "extractive", "fields": {
                "hq": {"status": "found", "value": "Oslo", "sources": [1], "url": "https://a/"},
                "ceo": {"status": "conflict", "values": []}}}})
        self.assertEqual(job.row(), {
            "id": "1", "query": "Where is Acme?", "status": "done", "company": "Acme",
            "hq": "Oslo", "hq_source": "https://a/", "ceo": None, "ceo_source": None})

    def test_api_errors_carry_status_code_and_message(self):
        self.fake.routes[("GET", "/v1/batches/b1")] = lambda h: h.json(
            401, {"error": {"code": "unauthorized", "message": "unknown or revoked API token"}})
        with self.assertRaises(TrawlError) as caught:
            self.client.batch("b1")
        e = caught.exception
        self.assertEqual((e.status, e.code, e.message),
                         (401, "unauthorized", "unknown or revoked API token"))
        self.assertEqual(
            str(e), "GET /v1/batches/b1: 401 unauthorized: unknown or revoked API token")
        self.assertEqual(self.fake.paths("GET").count("/v1/batches/b1"), 1, "no retry")

    def test_a_proxys_page_is_reported_by_status_and_text(self):
        self.fake.routes[("GET", "/v1/jobs/j1")] = lambda h: h.raw(
            502, b"<html>Bad Gateway</html>", "text/html")
        with self.assertRaises(TrawlError) as caught:
            self.client.job("j1")
        e = caught.exception
        self.assertEqual((e.status, e.code, e.message),
                         (502, "bad_gateway", "<html>Bad Gateway</html>"))
        self.assertEqual(len(self.slept()), 4, "retried up to max_retries")

    def test_retries_stop_where_waiting_cannot_help(self):
        quota = {"error": {"code": "quota_exceeded", "message": "100 open batches"}}
        self.fake.routes[("POST", "/v1/batches")] = lambda h: h.json(429, quota)
        with self.assertRaises(TrawlError) as caught:
            self.client.submit("q")
        self.assertEqual((caught.exception.code, self.slept()), ("quota_exceeded", []))
        daily = {"error": {"code": "quota_exceeded", "message": "per day"}}
        self.fake.routes[("POST", "/v1/batches")] = lambda h: h.json(
            429, daily, (("Retry-After", "36000"),))
        with self.assertRaises(TrawlError) as caught:
            self.client.submit("q")
        self.assertEqual((caught.exception.retry_after, self.slept()), (36000.0, []))

    def test_an_answer_that_is_not_the_model_names_the_endpoint(self):
        self.fake.routes[("GET", "/v1/batches/b1")] = lambda h: h.json(200, {"batch_id": "b1"})
        with self.assertRaises(TrawlDecodeError) as caught:
            self.client.batch("b1")
        self.assertIn("GET /v1/batches/b1", str(caught.exception))
        self.assertIn("BatchStatus has no 'created_at'", str(caught.exception))
        self.fake.routes[("GET", "/v1/jobs/j1")] = lambda h: h.raw(200, b"<html/>", "text/html")
        with self.assertRaisesRegex(
                TrawlError, r"GET /v1/jobs/j1: 200 bad_response: the answer is not JSON"):
            self.client.job("j1")

    def test_unreachable_servers_are_reported_after_a_few_attempts(self):
        self.fake.server_close()
        with self.assertRaises(TrawlError) as caught:
            Client(self.url, "t").batch("b1")
        self.assertEqual((caught.exception.status, caught.exception.code), (None, "transport"))
        self.assertIn("is `trawl serve` running there?", caught.exception.message)

    def test_redirects_are_not_followed_with_the_token(self):
        self.fake.routes[("GET", "/v1/jobs/j1")] = lambda h: h.raw(
            302, b"", "text/plain", (("Location", "http://elsewhere/"),))
        with self.assertRaisesRegex(TrawlError, "redirected to http://elsewhere/"):
            self.client.job("j1")

    def test_work_products_are_bytes_and_their_names_paths(self):
        self.fake.routes[("GET", "/v1/jobs/j%201/work-products/docs/1 a.json")] = lambda h: h.raw(
            200, b'{"x": 1}', "application/json")
        # The server decodes the path; the client encodes each segment, keeping the slashes.
        self.fake.routes[("GET", "/v1/jobs/j%201/work-products/docs/1%20a.json")] = \
            self.fake.routes[("GET", "/v1/jobs/j%201/work-products/docs/1 a.json")]
        self.assertEqual(self.client.work_product("j 1", "docs/1 a.json"), b'{"x": 1}')


class Versions(ClientTest):
    def test_another_api_version_is_refused_before_any_request(self):
        self.fake.routes[("GET", "/openapi.json")] = lambda h: h.json(
            200, {"info": {"version": "0.2.0"}})
        with self.assertRaises(TrawlVersionError) as caught:
            self.client.batch("b1")
        message = str(caught.exception)
        for words in ("0.2.0", "0.1.0", "pip install ./clients/python", "TRAWL_API_URL"):
            self.assertIn(words, message)
        self.assertIsInstance(caught.exception, TrawlError)
        self.assertEqual(self.fake.paths(), ["/openapi.json"])
        self.assertNotIn("Authorization", self.fake.requests[0][3])

    def test_the_same_major_minor_is_accepted_once(self):
        self.fake.routes[("GET", "/v1/batches/b1")] = lambda h: h.json(200, status(1))
        self.client.batch("b1")
        self.client.batch("b1")
        self.assertEqual(self.fake.paths(), ["/openapi.json", "/v1/batches/b1", "/v1/batches/b1"])
        self.assertEqual(self.client.server_version, "0.1.3")

    def test_a_server_without_the_document_is_not_taken_for_trawl(self):
        self.fake.routes[("GET", "/openapi.json")] = lambda h: h.raw(
            404, b"Not Found", "text/plain")
        with self.assertRaisesRegex(TrawlVersionError, "the address of `trawl serve`"):
            self.client.job("j1")
        self.fake.routes[("GET", "/openapi.json")] = lambda h: h.json(200, {"hello": 1})
        with self.assertRaisesRegex(TrawlVersionError, "states no API version"):
            self.client.job("j1")

    def test_the_check_can_be_turned_off(self):
        self.fake.routes[("GET", "/openapi.json")] = lambda h: h.json(
            200, {"info": {"version": "9.0.0"}})
        self.fake.routes[("GET", "/v1/batches/b1")] = lambda h: h.json(200, status(1))
        Client(self.url, "t", check_version=False).batch("b1")
        self.assertEqual(self.fake.paths(), ["/v1/batches/b1"])


class Paging(ClientTest):
    def test_jobs_come_from_every_page(self):
        def page(h: Handler) -> None:
            start = int(h.query.get("cursor", 0))
            jobs = [{"job_id": f"j{i}", "id": str(i), "metadata": {}, "query": "q",
                     "status": "pending"} for i in range(start, min(start + 2, 5))]
            h.json(200, {"jobs": jobs, "next_cursor": str(start + 2) if start + 2 < 5 else None})
        self.fake.routes[("GET", "/v1/batches/b1/jobs")] = page
        self.assertEqual([j.job_id for j in self.client.jobs("b1", page_size=2)],
                         ["j0", "j1", "j2", "j3", "j4"])
        self.assertEqual([r[2] for r in self.fake.requests[1:]],
                         [{"limit": "2"}, {"limit": "2", "cursor": "2"},
                          {"limit": "2", "cursor": "4"}])

    def test_batches_come_newest_first_and_a_looping_cursor_is_an_error(self):
        pages = {None: ([status(2, batch_id="b3"), status(2, batch_id="b2")], "c1"),
                 "c1": ([status(1, batch_id="b1")], None)}
        def page(h: Handler) -> None:
            batches, next_cursor = pages[h.query.get("cursor")]
            h.json(200, {"batches": batches, "next_cursor": next_cursor})
        self.fake.routes[("GET", "/v1/batches")] = page
        self.assertEqual([b.batch_id for b in self.client.batches(limit=2)], ["b3", "b2", "b1"])
        self.assertEqual(self.fake.requests[1][2], {"limit": "2"})
        pages["c1"] = ([], "c1")
        with self.assertRaisesRegex(TrawlError, "the cursor 'c1' came back"):
            list(self.client.batches())


class Results(ClientTest):
    def export(self, pages: Dict[Any, Tuple[List[int], Any]], breaks: List[Any], gzipped: bool
               ) -> None:
        """Serves `pages` (cursor -> job numbers, next cursor); a cursor in `breaks` is broken
        off after its first line once."""
        def page(h: Handler) -> None:
            jobs, next_cursor = pages[h.query.get("cursor")]
            headers = (("X-Next-Cursor", next_cursor),) if next_cursor else ()
            body = b"".join(json.dumps(result(n)).encode() + b"\n" for n in jobs)
            if gzipped and "gzip" in h.headers.get("Accept-Encoding", ""):
                headers += (("Content-Encoding", "gzip"),)
                body = gzip.compress(body)
            h.chunked("application/x-ndjson", headers)
            if h.query.get("cursor") in breaks:
                breaks.remove(h.query.get("cursor"))
                cut = len(body) // 2 if gzipped else body.index(b"\n") + 1
                h.chunk(body[:cut])
                return h.end(complete=False)
            h.chunk(body)
            h.end()
        self.fake.routes[("GET", "/v1/batches/b1/results")] = page

    def test_every_page_once_in_order_through_broken_pages(self):
        for gzipped in (False, True):
            with self.subTest(gzipped=gzipped):
                self.fake.requests.clear()
                pages = {None: ([1, 2], "j3"), "j3": ([3, 4], "j5"), "j5": ([5], None)}
                self.export(pages, breaks=[None, "j5"], gzipped=gzipped)
                ids = [r.job_id for r in self.client.results("b1", page_size=2)]
                self.assertEqual(ids, ["j1", "j2", "j3", "j4", "j5"])
                queries = [r[2] for r in self.fake.requests if r[1].endswith("/results")]
                self.assertEqual([q.get("cursor") for q in queries], [None, None, "j3", "j5", "j5"])

    def test_work_products_are_asked_for(self):
        self.export({None: ([1], None)}, [], gzipped=True)
        list(self.client.results("b1", work_products=True))
        self.assertEqual(self.fake.requests[-1][2], {"limit": "100", "work_products": "true"})

    def test_a_server_that_misbehaves_is_an_error_not_an_endless_export(self):
        for pages, error in [
            ({None: ([1], "j2"), "j2": ([2], None)}, "a page that is not the last held 1 of 2"),
            ({None: ([1, 2, 3], None)}, "more than the 2 lines"),
            ({None: ([1, 2], "j3"), "j3": ([3, 4], "j3")}, "the cursor 'j3' came back"),
        ]:
            with self.subTest(error=error):
                self.export(pages, [], gzipped=False)
                with self.assertRaisesRegex(TrawlError, error):
                    list(self.client.results("b1", page_size=2))

    def test_a_page_that_keeps_breaking_is_reported(self):
        self.export({None: ([1, 2], None)}, [None] * 10, gzipped=False)
        with self.assertRaisesRegex(TrawlError, "the page broke off 5 times"):
            list(self.client.results("b1"))


class Waiting(ClientTest):
    def events(self, *streams: List[Tuple[str, Dict[str, Any]]], complete: bool = False) -> None:
        """Each connection to the event stream gets the next of `streams`, broken off at its end
        unless it ends with `done`."""
        def stream(events: List[Tuple[str, Any]]) -> Callable[[Handler], None]:
            def send(h: Handler) -> None:
                h.chunked("text/event-stream")
                for kind, data in events:
                    text = data if isinstance(data, str) else json.dumps(data)
                    h.chunk(f"event: {kind}\ndata: {text}\n\n".encode() if kind else b":\n\n")
                h.end(complete=complete or (events and events[-1][0] in ("done", "error")))
            return send
        self.fake.sequence("GET", "/v1/batches/b1/events", *map(stream, streams))

    def test_a_dropped_stream_is_followed_again_and_each_change_reported_once(self):
        self.events([("progress", status(0)), ("", {})],
                    [("progress", status(0)), ("progress", status(1)), ("done", status(2))])
        seen: List[int] = []
        final = self.client.wait("b1", progress=lambda s: seen.append(s.finished))
        self.assertEqual((final.done, seen), (True, [0, 1, 2]))
        self.assertEqual(self.fake.paths().count("/v1/batches/b1/events"), 2)

    def test_an_error_event_reconnects(self):
        self.events([("error", "the store did not answer")], [("done", status(2))])
        self.assertTrue(self.client.wait("b1").done)

    def test_polling_when_the_stream_keeps_breaking_or_is_not_one(self):
        self.events([("progress", status(0))], [], [])
        self.fake.sequence("GET", "/v1/batches/b1", lambda h: h.json(200, status(1)),
                           lambda h: h.json(200, status(2)))
        seen: List[int] = []
        self.assertTrue(self.client.wait("b1", progress=lambda s: seen.append(s.finished)).done)
        self.assertEqual(seen, [0, 1, 2])
        self.fake.requests.clear()
        self.fake.routes[("GET", "/v1/batches/b1/events")] = lambda h: h.raw(
            200, b"<html/>", "text/html")
        self.assertTrue(self.client.wait("b1").done)
        self.assertEqual(self.fake.paths(), ["/v1/batches/b1/events", "/v1/batches/b1"])

    def test_an_unknown_batch_is_an_error_not_a_wait(self):
        with self.assertRaises(TrawlError) as caught:
            self.client.wait("nope")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))

    def test_the_deadline_holds_while_the_stream_only_keeps_alive(self):
        def slow(h: Handler) -> None:
            h.chunked("text/event-stream")
            h.chunk(f"event: progress\ndata: {json.dumps(status(1))}\n\n".encode())
            try:
                for _ in range(100):
                    time.sleep(0.05)
                    h.chunk(b":\n\n")
            except OSError:
                pass  # the client hung up
            h.end(complete=False)
        self.fake.routes[("GET", "/v1/batches/b1/events")] = slow
        started = time.monotonic()
        with self.assertRaises(TrawlTimeoutError) as caught:
            self.client.wait("b1", timeout=0.3)
        self.assertLess(time.monotonic() - started, 3)
        self.assertIn("1/2 jobs ended", str(caught.exception))
        self.assertEqual(caught.exception.last.finished, 1)

    def test_research_submits_waits_and_returns_the_job(self):
        created = {"batch_id": "b1", "created_at": "t",
                   "jobs": [{"job_id": "j1", "id": "1", "query": "q"}]}
        job = {"job_id": "j1", "batch_id": "b1", "id": "1", "metadata": {}, "query": "q",
               "status": "done", "report": "Answer [1].", "work_products": ["report.md"]}
        self.fake.routes[("POST", "/v1/batches")] = lambda h: h.json(201, created)
        self.fake.routes[("GET", "/v1/jobs/j1")] = lambda h: h.json(200, job)
        self.events([("done", status(1, total=1))])
        self.assertEqual(self.client.research("q", max_urls=3).report, "Answer [1].")
        self.assertEqual(self.fake.requests[1][4], {"questions": [{"query": "q"}],
                                                    "options": {"max_urls": 3}})


if __name__ == "__main__":
    unittest.main()
