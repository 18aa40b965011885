"""`Client`: trawl's HTTP API (`trawl serve`) over urllib, with no dependencies.

Retries: a request is sent again when the answer says another attempt can succeed: 429 (after
its Retry-After), 503 and the 502/504 of a proxy in front of it, 409 `in_progress` (an earlier
attempt with the same Idempotency-Key is still being handled), and a connection that failed.
A Retry-After longer than `max_retry_wait` is reported instead of waited on, and so is a 429
`quota_exceeded` without one (the open-batches quota frees only when a batch ends). Retrying a
submission is safe because each `submit` call sends one Idempotency-Key with every attempt.

Versions: before its first authenticated request the client reads `/openapi.json` (it needs
no token) and refuses a server whose `info.version` differs in major.minor from API_VERSION,
the version of the document this client was built from.
"""

import collections.abc
import contextlib
import gzip
import http.client
import json
import math
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zlib
from typing import (
    IO, Any, Callable, Dict, Generator, Iterable, Iterator, List, Mapping, Optional, Tuple, Type,
    TypeVar, Union, cast,
)

from .errors import TrawlDecodeError, TrawlError, TrawlTimeoutError, TrawlVersionError
from .models import (
    BatchCreated, BatchEvent, BatchPage, BatchStatus, ErrorBody, Job, JobOptions, JobPage,
    JobResult, JobSummary, Model, Question, ReportView, TokenInfo,
)

API_VERSION = "0.1.0"
"""`info.version` of services/api/openapi.json when this client was written (a test checks)."""
__version__ = "0.1.0"

M = TypeVar("M", bound=Model)
QuestionLike = Union[str, Mapping[str, Any], Question]
Progress = Callable[[BatchStatus], None]

_RETRY_STATUSES = {409, 429, 502, 503, 504}
_TRANSPORT_ATTEMPTS = 3  # a mistyped URL is reported within seconds
_STREAM_ATTEMPTS = 3  # event streams broken in a row before `wait` polls instead
# The API sends an SSE comment every 15 s: a stream silent for longer than this is dead.
_KEEPALIVE_SECS = 30.0
_TRANSPORT_ERRORS = (OSError, http.client.HTTPException, EOFError, zlib.error)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The API never redirects; following one would send the token to wherever it points."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                         headers: http.client.HTTPMessage, newurl: str) -> None:
        return None


class Client:
    """One `trawl serve` reached with one token.

    `base_url` (default: env TRAWL_API_URL) is `http(s)://host[:port][/prefix]`; `token`
    (default: env TRAWL_API_TOKEN) comes from `trawl token create`; `timeout` is the socket
    timeout of each request in seconds (a wait on a blocking read, not a total).
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        token: Optional[str] = None,
        timeout: float = 30,
        *,
        max_retries: int = 5,
        max_retry_wait: float = 60,
        poll_interval: float = 2,
        check_version: bool = True,
    ) -> None:
        base_url = base_url or os.environ.get("TRAWL_API_URL")
        token = token or os.environ.get("TRAWL_API_TOKEN")
        if not base_url:
            raise ValueError("no API URL: pass base_url or set TRAWL_API_URL")
        if urllib.parse.urlsplit(base_url).scheme not in ("http", "https"):
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        if not token or not token.strip():
            raise ValueError("no API token: pass token or set TRAWL_API_TOKEN")
        self.base_url = base_url.rstrip("/")
        self._token = token.strip()
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.poll_interval = poll_interval
        self._check = check_version
        self._server_version: Optional[str] = None
        self._opener = urllib.request.build_opener(_NoRedirect)

    def __repr__(self) -> str:  # never the token
        return f"Client({self.base_url!r})"

    # Batches ------------------------------------------------------------------------------

    def submit(
        self,
        questions: Union[QuestionLike, Iterable[QuestionLike]] = (),
        options: Union[JobOptions, Mapping[str, Any], None] = None,
        webhook: Optional[str] = None,
        budget_usd: Optional[float] = None,
        idempotency_key: Optional[str] = None,
        template: Optional[str] = None,
        rows: Optional[Iterable[Mapping[str, Any]]] = None,
        file: Optional[str] = None,
    ) -> BatchCreated:
        """Submits a batch. Each question is a string, a Question or a dict with `query` and
        optionally `id`, `metadata`, `options`; a lone string or dict is a batch of one. With
        `template` ("Where is {company}?") and `rows` (dicts), each row is a question too, its
        values its metadata. `options` are every question's defaults (`{"fields": schema}`
        asks each for values as data: see `JobResult.row`). Without `idempotency_key` a fresh
        one is made, so this call's retries never create a second batch; pass your own to make
        retries of the whole call (e.g. after a crash) safe too. `file` is a batch file's text,
        read by the server as `trawl submit` reads one (a CSV table with `template`); a bad
        line is refused by its number."""
        if isinstance(questions, (str, collections.abc.Mapping, Question)):
            questions = [questions]
        body: Dict[str, Any] = {"questions": [_question(q) for q in questions]}
        if file is not None:
            body["file"] = file
            if template is not None:
                body["template"] = template
        elif template is not None or rows is not None:
            body["template"] = template
            body["rows"] = [dict(r) for r in rows or ()]
        if options is not None:
            body["options"] = _options(options)
        if webhook is not None:
            body["webhook"] = webhook
        if budget_usd is not None:
            body["budget_usd"] = budget_usd
        key = idempotency_key or str(uuid.uuid4())
        return self._json(BatchCreated, "POST", "/v1/batches", body=body,
                          headers={"Idempotency-Key": key})

    def batch(self, batch_id: str) -> BatchStatus:
        """The batch's progress, cost and unusable sources."""
        return self._json(BatchStatus, "GET", f"/v1/batches/{_seg(batch_id)}")

    def batches(self, limit: int = 20) -> Iterator[BatchStatus]:
        """The token's batches, newest first, every page; `limit` is the page size (1 to 100;
        slice the iterator, e.g. with itertools.islice, for only the newest few)."""
        for page in self._pages(BatchPage, "/v1/batches", limit):
            yield from page.batches

    def cancel(self, batch_id: str) -> BatchStatus:
        """Cancels the batch: pending jobs end `cancelled`; jobs in progress finish. Cancelling
        again changes nothing. Returns the status just after."""
        return self._json(BatchStatus, "DELETE", f"/v1/batches/{_seg(batch_id)}")

    def jobs(self, batch_id: str, page_size: int = 500,
             status: Optional[str] = None) -> Iterator[JobSummary]:
        """The batch's jobs in submission order, every page; with `status` (pending, done,
        partial, no_sources, no_answer, failed, cancelled) only those in it."""
        path = f"/v1/batches/{_seg(batch_id)}/jobs"
        for page in self._pages(JobPage, path, page_size, {"status": status} if status else {}):
            yield from page.jobs

    def events(self, batch_id: str) -> Iterator[BatchEvent]:
        """The batch's server-sent events over one connection, as they come: `progress`, then
        `done` (or `error`), after which the server closes the stream. No reconnection: `wait`
        is the robust way to follow a batch."""
        stream = self._event_stream(batch_id, max(self.timeout, _KEEPALIVE_SECS))
        try:
            for event in stream:
                if event is not None:
                    yield event
        except _TRANSPORT_ERRORS as e:
            raise TrawlError(f"the event stream broke off: {e}", None, "transport",
                             f"GET /v1/batches/{batch_id}/events") from None

    def wait(
        self, batch_id: str, progress: Optional[Progress] = None, timeout: Optional[float] = None
    ) -> BatchStatus:
        """Follows the batch until every job has ended and returns its final status, calling
        `progress(status)` on each change. Reads the event stream, reconnecting when it breaks;
        after several broken streams in a row, or when the stream cannot be opened (a proxy
        that does not pass it), polls the batch every `poll_interval` seconds instead. Raises
        TrawlTimeoutError after `timeout` seconds (the overrun is at most one socket read)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        endpoint = f"GET /v1/batches/{batch_id}/events"
        last: Optional[BatchStatus] = None

        def seen(status: BatchStatus) -> bool:
            nonlocal last
            if status != last:
                last = status
                if progress is not None:
                    progress(status)
            return status.done

        def check_deadline() -> float:
            if deadline is None:
                return math.inf
            left = deadline - time.monotonic()
            if left <= 0:
                where = f" ({last.finished}/{last.total} jobs ended)" if last else ""
                raise TrawlTimeoutError(
                    f"batch {batch_id} did not end within {timeout} s{where}", endpoint, last)
            return left

        broken = 0
        while broken < _STREAM_ATTEMPTS:
            read_timeout = min(max(self.timeout, _KEEPALIVE_SECS), check_deadline() + 0.1)
            try:
                with contextlib.closing(self._event_stream(batch_id, read_timeout)) as stream:
                    for event in stream:
                        check_deadline()
                        if event is None:
                            continue
                        if event.event == "error":
                            break  # the fleet did not answer; the stream ends: reconnect
                        if event.event in ("progress", "done"):
                            broken = 0
                            try:
                                status = event.status()
                            except TrawlDecodeError as e:
                                raise TrawlDecodeError(e.message, endpoint) from None
                            if seen(status) or event.event == "done":
                                return status
            except _StreamUnavailable:
                break
            except TrawlError:
                raise  # a timeout (also an OSError), a refused token, a bad event
            except _TRANSPORT_ERRORS:
                pass
            broken += 1
            check_deadline()
            time.sleep(min(0.5 * 2 ** broken, 5))
        while True:  # polling: the stream is not to be had
            if seen(self.batch(batch_id)):
                assert last is not None
                return last
            time.sleep(min(self.poll_interval, check_deadline()))

    def results(
        self, batch_id: str, work_products: bool = False, page_size: Optional[int] = None
    ) -> Iterator[JobResult]:
        """Every job of the batch with its results, in submission order, streamed a page at a
        time (gzip on the wire). With `work_products`, each ended job's every file comes along
        as text. A page that breaks off is asked for again and its lines already yielded are
        skipped, so each job comes exactly once; a server that loops or sends more than asked
        is an error, not an endless iterator."""
        limit = page_size or (100 if work_products else 1000)
        path = f"/v1/batches/{_seg(batch_id)}/results"
        query: Dict[str, Any] = {"limit": limit}
        if work_products:
            query["work_products"] = "true"
        seen = set()
        while True:
            lines, next_cursor = yield from self._export_page(path, query, limit)
            if next_cursor is None:
                return
            if lines != limit:
                raise TrawlError(f"a page that is not the last held {lines} of {limit} jobs",
                                 200, "bad_response", f"GET {path}")
            if next_cursor in seen:
                raise TrawlError(f"the cursor {next_cursor!r} came back", 200, "bad_response",
                                 f"GET {path}")
            seen.add(next_cursor)
            query["cursor"] = next_cursor

    def _export_page(self, path: str, query: Dict[str, Any], limit: int
                     ) -> Generator[JobResult, None, Tuple[int, Optional[str]]]:
        """One page of the export, asked for again when it breaks off (the server streams it
        as it reads the jobs, so a failure there cuts the connection): returns its line count
        and the next page's cursor."""
        endpoint = f"GET {path}"
        yielded, attempt, first_next = 0, 0, None
        while True:
            response = self._open("GET", path, query, headers={
                "Accept": "application/x-ndjson", "Accept-Encoding": "gzip"})
            next_cursor = response.headers.get("X-Next-Cursor") or None
            if attempt and next_cursor != first_next:
                raise TrawlError("a page asked for again named another next page", 200,
                                 "bad_response", endpoint)
            first_next = next_cursor
            try:
                with response:
                    gzipped = response.headers.get("Content-Encoding", "").lower() == "gzip"
                    body = gzip.GzipFile(fileobj=response) if gzipped else response
                    n = 0
                    for n, raw in enumerate(_lines(body, response), 1):
                        if not raw.endswith(b"\n"):
                            raise EOFError("the page ended inside a line")
                        if n > limit:
                            raise TrawlError(f"a page held more than the {limit} lines asked",
                                             200, "bad_response", endpoint)
                        if n > yielded:  # lines before were yielded before the page broke off
                            yield _decode_json(JobResult, raw, endpoint, 200, f"page line {n}")
                            yielded = n
                return n, next_cursor
            except _TRANSPORT_ERRORS as e:
                attempt += 1
                if attempt >= self.max_retries:
                    raise TrawlError(f"the page broke off {attempt} times, last after {yielded} "
                                     f"lines: {e}", None, "transport", endpoint) from None
                time.sleep(_backoff(attempt))

    def research(
        self,
        question: QuestionLike,
        *,
        progress: Optional[Progress] = None,
        timeout: Optional[float] = None,
        **options: Any,
    ) -> Job:
        """One question researched in one call: submits it (with `options`, e.g. max_urls=5,
        report_type="brief"), waits for it, and returns the Job with its report."""
        created = self.submit([question], options=options or None)
        self.wait(created.batch_id, progress, timeout)
        return self.job(created.jobs[0].job_id)

    # Jobs ---------------------------------------------------------------------------------

    def job(self, job_id: str) -> Job:
        """A job's status and, once it has ended, its report and work products' names."""
        return self._json(Job, "GET", f"/v1/jobs/{_seg(job_id)}")

    def report(self, job_id: str) -> ReportView:
        """A job's report as HTML with each citation's source and quotes (None until it ends)."""
        return self._json(ReportView, "GET", f"/v1/jobs/{_seg(job_id)}/report")

    def token(self) -> TokenInfo:
        """The token this client uses: its id, name and whether it is read-only."""
        return self._json(TokenInfo, "GET", "/v1/token")

    def work_product(self, job_id: str, name: str) -> bytes:
        """One work product of an ended job as bytes (`report.md`, `sources.json`,
        `docs/1.json` …: a name from `Job.work_products`)."""
        path = f"/v1/jobs/{_seg(job_id)}/work-products/{urllib.parse.quote(name, safe='/')}"
        with self._open("GET", path, headers={"Accept": "*/*"}) as response:
            try:
                return response.read()
            except _TRANSPORT_ERRORS as e:
                raise TrawlError(f"the answer broke off: {e}", None, "transport", f"GET {path}")

    @property
    def server_version(self) -> str:
        """The API version the server states (`info.version` of its /openapi.json)."""
        self._check_version()
        assert self._server_version is not None
        return self._server_version

    # Plumbing -----------------------------------------------------------------------------

    def _check_version(self) -> None:
        if self._server_version is not None:
            return
        where = f"{self.base_url}/openapi.json"
        try:
            with self._open("GET", "/openapi.json", auth=False) as response:
                version = json.loads(response.read())["info"]["version"]
            if not isinstance(version, str):
                raise TypeError(version)
        except TrawlError as e:
            if e.status is None:
                raise  # nothing answered: not a version problem
            raise TrawlVersionError(
                f"{where} answered {e.status} {e.code} ({e.message}), not the API's document: "
                f"is {self.base_url} the address of `trawl serve` (API {API_VERSION})?") from None
        except (ValueError, KeyError, TypeError) as e:
            raise TrawlVersionError(
                f"{where} states no API version ({type(e).__name__}): is {self.base_url} the "
                f"address of `trawl serve` (API {API_VERSION})?") from None
        if self._check and _major_minor(version) != _major_minor(API_VERSION):
            raise TrawlVersionError(
                f"the server at {self.base_url} speaks trawl API {version}, but this client "
                f"(trawl-client {__version__}) was built for API {API_VERSION}: install the "
                f"client from the same trawl release as the server (pip install "
                f"./clients/python from its source tree), or point TRAWL_API_URL at a server of "
                f"API {'.'.join(map(str, _major_minor(API_VERSION)))}.x", version)
        self._server_version = version

    def _open(
        self,
        method: str,
        path: str,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        auth: bool = True,
        timeout: Optional[float] = None,
    ) -> http.client.HTTPResponse:
        """The successful response to the request, after the retries the module docs
        describe; TrawlError (with the API's code and message) otherwise."""
        if auth and self._check and self._server_version is None:
            self._check_version()
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode()
        sent = {"Accept": "application/json", "User-Agent": f"trawl-client/{__version__}"}
        if data is not None:
            sent["Content-Type"] = "application/json"
        if auth:
            sent["Authorization"] = f"Bearer {self._token}"
        sent.update(headers or {})
        endpoint = f"{method} {path}"
        attempt = 0
        while True:
            attempt += 1
            request = urllib.request.Request(url, data=data, headers=sent, method=method)
            try:
                response = self._opener.open(request, timeout=timeout or self.timeout)
                return cast(http.client.HTTPResponse, response)
            except urllib.error.HTTPError as e:
                error = _api_error(e, endpoint)
                delay = self._retry_delay(error, attempt)
            except (urllib.error.URLError, *_TRANSPORT_ERRORS) as e:
                reason = getattr(e, "reason", None) or e
                error = TrawlError(f"no answer from {self.base_url}: {reason}; is `trawl serve` "
                                   "running there?", None, "transport", endpoint)
                delay = _backoff(attempt) if attempt < _TRANSPORT_ATTEMPTS else None
            if delay is None:
                raise error
            time.sleep(delay)

    def _retry_delay(self, error: TrawlError, attempt: int) -> Optional[float]:
        """Seconds to wait before retrying `error`, or None to report it."""
        if error.status not in _RETRY_STATUSES or attempt >= self.max_retries:
            return None
        if error.status == 409 and error.code != "in_progress":
            return None
        if error.retry_after is None:
            return None if error.code == "quota_exceeded" else _backoff(attempt)
        return error.retry_after if error.retry_after <= self.max_retry_wait else None

    def _json(self, model: Type[M], method: str, path: str, query: Optional[Mapping[str, Any]]
              = None, body: Any = None, headers: Optional[Mapping[str, str]] = None) -> M:
        endpoint = f"{method} {path}"
        with self._open(method, path, query, body, headers) as response:
            try:
                raw = response.read()
            except _TRANSPORT_ERRORS as e:
                raise TrawlError(f"the answer broke off: {e}", None, "transport", endpoint)
            return _decode_json(model, raw, endpoint, response.status)

    def _pages(self, model: Type[M], path: str, limit: int,
               extra: Optional[Mapping[str, Any]] = None) -> Iterator[M]:
        """Every page of a list whose body carries `next_cursor`, refusing a cursor that comes
        back (a server that would page for ever)."""
        query: Dict[str, Any] = {"limit": limit, **(extra or {})}
        seen = set()
        while True:
            page = self._json(model, "GET", path, query)
            yield page
            cursor = getattr(page, "next_cursor")
            if cursor is None:
                return
            if cursor in seen:
                raise TrawlError(f"the cursor {cursor!r} came back", 200, "bad_response",
                                 f"GET {path}")
            seen.add(cursor)
            query["cursor"] = cursor

    def _event_stream(self, batch_id: str, read_timeout: float
                      ) -> Generator[Optional[BatchEvent], None, None]:
        """The stream's events as an event-stream parser delivers them; None for each comment
        (the server's keep-alives), so a caller can check its deadline while nothing happens."""
        path = f"/v1/batches/{_seg(batch_id)}/events"
        try:
            response = self._open("GET", path, headers={"Accept": "text/event-stream"},
                                  timeout=read_timeout)
        except TrawlError as e:
            if e.status in (401, 403) or e.code == "version_mismatch":
                raise
            raise _StreamUnavailable(e.message, e.status, e.code, e.endpoint) from None
        with response:
            kind = response.headers.get("Content-Type", "")
            if not kind.startswith("text/event-stream"):
                raise _StreamUnavailable(f"the answer is {kind!r}, not an event stream",
                                         response.status, "bad_response", f"GET {path}")
            event = "message"
            data: List[str] = []
            for raw in _lines(response, response):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not line:
                    if data:
                        yield BatchEvent(event=event, data="\n".join(data))
                    event, data = "message", []
                elif line.startswith(":"):
                    yield None
                else:
                    name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if name == "event":
                        event = value
                    elif name == "data":
                        data.append(value)


class _StreamUnavailable(TrawlError):
    """The event stream could not be opened, or is not one: `wait` polls instead."""


def _lines(body: Any, response: http.client.HTTPResponse) -> Iterator[bytes]:
    """The lines of a streamed `body` (the response, or a decompressor reading it) as they
    arrive, each with its `\n` (a last one without is a body cut short). Raises IncompleteRead
    when the response breaks off: http.client's own readline takes a broken chunked body for a
    whole one, which would end a page or a stream early without a word."""
    pending: List[bytes] = []
    while True:
        chunk = body.read1(1 << 16)
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            pending.append(chunk[start:end + 1])
            yield b"".join(pending)
            pending, start = [], end + 1
        if start < len(chunk):
            pending.append(chunk[start:])
    if response.length:  # a Content-Length not reached
        raise http.client.IncompleteRead(b"", response.length)
    if pending:
        yield b"".join(pending)


def _seg(value: str) -> str:
    """One path segment, percent-encoded: ids come from users and may hold anything."""
    return urllib.parse.quote(str(value), safe="")


def _backoff(attempt: int) -> float:
    return min(0.5 * 2.0 ** (attempt - 1), 30.0)


def _major_minor(version: str) -> Tuple[str, ...]:
    return tuple(version.strip().lstrip("v").split(".")[:2])


def _question(q: QuestionLike) -> Dict[str, Any]:
    if isinstance(q, str):
        return {"query": q}
    if isinstance(q, Question):
        return q.to_json()
    if isinstance(q, collections.abc.Mapping):
        q = dict(q)
        if isinstance(q.get("options"), JobOptions):
            q["options"] = q["options"].to_json()
        return q
    raise TypeError(f"a question is a string, a dict or a Question, not {type(q).__name__}")


def _options(options: Union[JobOptions, Mapping[str, Any]]) -> Dict[str, Any]:
    return options.to_json() if isinstance(options, JobOptions) else dict(options)


def _decode_json(model: Type[M], raw: bytes, endpoint: str, status: int, what: str = "the answer"
                 ) -> M:
    """`raw` as a `model`; a TrawlDecodeError naming the endpoint when it is not one."""
    try:
        value = json.loads(raw)
    except ValueError:
        snippet = raw[:120].decode("utf-8", "replace").strip()
        raise TrawlDecodeError(f"{what} is not JSON ({snippet!r}), not a {model.__name__}: is this "
                               "a trawl API?", endpoint, status) from None
    try:
        return model.from_json(value)
    except TrawlDecodeError as e:
        raise TrawlDecodeError(f"{what} is not a {model.__name__} as this client knows it: "
                               f"{e.message}", endpoint, status) from None


def _api_error(e: urllib.error.HTTPError, endpoint: str) -> TrawlError:
    """The error an HTTP error answer stands for: the API's `{"error": {code, message}}`, or
    the status and text of whatever answered instead (a proxy's page)."""
    try:
        raw = e.read()
    except _TRANSPORT_ERRORS:
        raw = b""
    retry_after: Optional[float] = None
    try:
        retry_after = float(e.headers.get("Retry-After", ""))
    except (TypeError, ValueError):
        pass  # absent, or an HTTP date: the back-off applies
    try:
        detail = ErrorBody.from_json(json.loads(raw)).error
        code, message = detail.code, detail.message
    except ValueError:  # not JSON, or not an ErrorBody (TrawlDecodeError is a ValueError)
        reason = e.reason if isinstance(e.reason, str) and e.reason else "error"
        code = reason.lower().replace(" ", "_")
        text = raw.decode("utf-8", "replace").strip()[:200]
        message = text or "the answer holds no trawl API error: is this `trawl serve`?"
    if 300 <= e.code < 400:
        message = (f"redirected to {e.headers.get('Location')}; the API does not redirect, so "
                   "use the final address as base_url (the token is not sent on)")
    return TrawlError(message, e.code, code, endpoint, retry_after)
