"""The API's objects as dataclasses, mirroring `components.schemas` of the OpenAPI document.

A field the schema requires has no default; any other defaults to None. `from_json` ignores
fields it does not know, so a newer server that adds some still decodes, and raises
TrawlDecodeError naming the model and the field when a required one is missing or a value has
the wrong type, so a server speaking something else fails clearly instead of with a KeyError
deep in user code. tests/test_models.py holds every model equal to its schema.

Timestamps (`created_at`) stay RFC 3339 strings: they carry nanoseconds, which `datetime`
does not, and Python 3.9's `fromisoformat` reads neither them nor the trailing `Z`.
"""

import dataclasses
import functools
import json
from typing import Any, Dict, List, Optional, Type, TypeVar, Union, cast
from typing import get_args, get_origin, get_type_hints

from .errors import TrawlDecodeError

M = TypeVar("M", bound="Model")


class Model:
    """Base of the models: strict-enough decoding and JSON without the unset fields."""

    @classmethod
    def from_json(cls: Type[M], value: Any) -> M:
        """The model in `value` (decoded JSON); TrawlDecodeError when it is not one."""
        return cast(M, _decode(cls, value, cls.__name__))

    def to_json(self) -> Dict[str, Any]:
        """The model as a JSON object, leaving out fields that are None: the API refuses an
        explicit null where it expects a value (`id`, `options` …), and absent means default."""
        return cast(Dict[str, Any], _drop_none(dataclasses.asdict(cast(Any, self))))


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> Dict[str, Any]:
    return get_type_hints(cls)


def _decode(hint: Any, value: Any, path: str) -> Any:
    """`value` checked against the type `hint`, with dataclasses built from objects."""
    if hint is Any:
        return value
    origin, args = get_origin(hint), get_args(hint)
    if origin is Union:  # only Optional[X] is used
        if value is None:
            return None
        return _decode(next(a for a in args if a is not type(None)), value, path)
    if value is None:
        raise TrawlDecodeError(f"{path} is null, expected {_name(hint)}")
    if origin is list:
        _expect(isinstance(value, list), hint, value, path)
        return [_decode(args[0], v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        _expect(isinstance(value, dict), hint, value, path)
        return {k: _decode(args[1], v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        _expect(isinstance(value, dict), hint, value, path)
        hints, kwargs = _hints(hint), {}
        for f in dataclasses.fields(hint):
            if f.name in value:
                kwargs[f.name] = _decode(hints[f.name], value[f.name], f"{path}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise TrawlDecodeError(f"{path} has no {f.name!r}, a required field")
        return hint(**kwargs)
    # bool is an int in Python, never in JSON.
    if hint is float:
        _expect(isinstance(value, (int, float)) and not isinstance(value, bool), hint, value, path)
        return float(value)
    if hint is int:
        _expect(isinstance(value, int) and not isinstance(value, bool), hint, value, path)
        return value
    _expect(isinstance(value, hint), hint, value, path)
    return value


def _expect(ok: bool, hint: Any, value: Any, path: str) -> None:
    if not ok:
        shown = json.dumps(value)[:80] if _jsonable(value) else repr(value)[:80]
        raise TrawlDecodeError(f"{path} is {shown}, expected {_name(hint)}")


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def _name(hint: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}
    if hint in names:
        return names[hint]
    origin = get_origin(hint)
    if origin is list:
        return "an array"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return f"an object ({hint.__name__})"
    return "an object" if origin is dict else str(hint)


# Responses ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class JobRef(Model):
    """A job as a submission lists it."""

    job_id: str
    id: str
    """The question's id: yours, or its position in `questions` (from 1) when it had none."""
    query: str


@dataclasses.dataclass(frozen=True)
class BatchCreated(Model):
    """The answer to a submission (201, or 200 when an Idempotency-Key replayed it)."""

    batch_id: str
    created_at: str
    jobs: List[JobRef]


@dataclasses.dataclass(frozen=True)
class BatchStatus(Model):
    """A batch's progress, cost and unusable sources."""

    batch_id: str
    created_at: str
    total: int
    started: int
    """Jobs whose search has run."""
    finished: int
    """Jobs ended, whatever their status."""
    by_status: Dict[str, int]
    """Ended jobs by status: done, partial, no_sources, no_answer, failed, cancelled."""
    cancelled: bool
    done: bool
    """True once every job has ended."""
    cost_usd: float
    unused_sources: Dict[str, int]


@dataclasses.dataclass(frozen=True)
class BatchPage(Model):
    """A page of `GET /v1/batches`: the token's batches, newest first."""

    batches: List[BatchStatus]
    next_cursor: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class JobSummary(Model):
    """A job as a batch's job list shows it."""

    job_id: str
    id: str
    metadata: Dict[str, Any]
    query: str
    status: str
    """pending, or how the job ended."""


@dataclasses.dataclass(frozen=True)
class JobPage(Model):
    """A page of `GET /v1/batches/{id}/jobs`."""

    jobs: List[JobSummary]
    next_cursor: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Job(Model):
    """A job's status and, once it has ended, its report."""

    job_id: str
    batch_id: str
    id: str
    metadata: Dict[str, Any]
    query: str
    status: str
    work_products: List[str]
    """Names for `Client.work_product`."""
    report: Optional[str] = None
    """The report in markdown with numbered citations, once the job has ended."""


@dataclasses.dataclass(frozen=True)
class CitationView(Model):
    """A source the report cites, as a reader following `[n]` wants it."""

    n: int
    """Its number in the report."""
    idx: int
    """Its `idx` in `sources.json`."""
    title: str
    url: str
    """With `#page=N` when the report cites a page of a document (a PDF)."""
    quotes: List[str]
    """The passages of it that support the report's statements, and the fields' quotes."""
    page: Optional[int] = None
    """The page of a document it is cited at."""


@dataclasses.dataclass(frozen=True)
class ReportView(Model):
    """A job's report as HTML (page text escaped; each `[n]` a link `#cite-n`) with what each
    citation stands for: what the web app shows."""

    job_id: str
    batch_id: str
    id: str
    query: str
    status: str
    citations: List[CitationView]
    html: Optional[str] = None
    """None until the job has ended."""
    answer: Optional[Dict[str, Any]] = None
    """The job's fields when it asked for some (`answer.json`)."""


@dataclasses.dataclass(frozen=True)
class TokenInfo(Model):
    """The token a client uses: `Client.token()`."""

    id: str
    name: str
    read_only: bool
    """A read-only token reads another token's batches and can submit or cancel none."""
    created_at: str


@dataclasses.dataclass(frozen=True)
class JobResult(Model):
    """One job of a batch with its results: a line of the results export."""

    id: str
    metadata: Dict[str, Any]
    job_id: str
    query: str
    status: str
    """pending, cancelled, or how the job ended: done, partial, no_sources, no_answer, failed."""
    sources: Any
    """The job's `sources.json`; None until the job has ended."""
    cost_usd: Optional[float] = None
    duration_ms: Optional[int] = None
    report: Optional[str] = None
    work_products: Optional[Dict[str, str]] = None
    """Every work product by name, as text; only with `results(..., work_products=True)`."""
    writer: Optional[str] = None
    answer: Optional[Dict[str, Any]] = None
    """The job's fields when it asked for some (`answer.json`): `{"fields": {name: {"status",
    "value", "sources", "quote", "url"}}, "by": ...}`; see `JobResult.row`."""

    def row(self) -> Dict[str, Any]:
        """The job as a table's row: id, query, status, its metadata, then each field's value
        (None when not found or disputed) and `<field>_source`, the URL that states it."""
        out: Dict[str, Any] = {"id": self.id, "query": self.query, "status": self.status}
        out.update(self.metadata)
        for name, field in ((self.answer or {}).get("fields") or {}).items():
            found = field.get("status") == "found"
            out[name] = field.get("value") if found else None
            out[f"{name}_source"] = field.get("url") if found else None
        return out


@dataclasses.dataclass(frozen=True)
class BatchEvent(Model):
    """One server-sent event of `GET /v1/batches/{id}/events`: `progress`, `done` or `error`."""

    event: str
    data: str
    """For `progress` and `done` a BatchStatus as JSON; for `error`, what failed."""

    def status(self) -> BatchStatus:
        """The BatchStatus a `progress` or `done` event carries."""
        if self.event not in ("progress", "done"):
            raise TrawlDecodeError(f"a {self.event!r} event carries no status: {self.data[:200]}")
        try:
            value = json.loads(self.data)
        except ValueError as e:
            raise TrawlDecodeError(f"the {self.event} event's data is not JSON ({e})") from None
        return BatchStatus.from_json(value)


@dataclasses.dataclass(frozen=True)
class ErrorDetail(Model):
    code: str
    message: str


@dataclasses.dataclass(frozen=True)
class ErrorBody(Model):
    """The body of every error response: `{"error": {"code", "message"}}`."""

    error: ErrorDetail


# Requests -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class JobOptions(Model):
    """Per-question options; unset ones take the batch's, then the server's configuration."""

    cache_max_age_secs: Optional[int] = None
    """Oldest copy of a page from the fleet's page cache to read instead of fetching; 0 fetches."""
    deadline_secs: Optional[int] = None
    exclude_domains: Optional[List[str]] = None
    """Hosts of these domains (and their subdomains) are never fetched nor cited."""
    freshness: Optional[str] = None
    """any, day, week, month or year."""
    include_domains: Optional[List[str]] = None
    """Only hosts of these domains and their subdomains (`gov`: every .gov host)."""
    language: Optional[str] = None
    """The question's language as a tag (de, pt-BR, zh): the providers' and the report's."""
    max_level: Optional[int] = None
    max_urls: Optional[int] = None
    min_relevance: Optional[float] = None
    providers: Optional[List[str]] = None
    report_max_tokens: Optional[int] = None
    report_type: Optional[str] = None
    """answer, brief or detailed."""
    search: Optional[bool] = None
    """False: read only `urls`, search nothing."""
    urls: Optional[List[str]] = None
    """URLs read as sources, before what search finds."""
    documents: Optional[str] = None
    """A documents root (s3://bucket/prefix, file:///dir …) under the server's documents.allow,
    searched beside the web; its files are cited as doc://<path>#page=N."""
    fields: Optional[Dict[str, Any]] = None
    """Values wanted as data: a JSON Schema object whose properties are the fields."""


@dataclasses.dataclass(frozen=True)
class Question(Model):
    """A question to submit (the document's `QuestionIn`); a plain string or dict also does."""

    query: str
    id: Optional[str] = None
    """Your own id, unique in the batch; without one, the question's position (from 1)."""
    metadata: Optional[Dict[str, Any]] = None
    """Your own JSON object (at most 4096 bytes), returned with the results."""
    options: Optional[JobOptions] = None


@dataclasses.dataclass(frozen=True)
class BatchIn(Model):
    """The body of a submission; `Client.submit` builds it."""

    questions: List[Question] = dataclasses.field(default_factory=list)
    options: Optional[JobOptions] = None
    webhook: Optional[str] = None
    budget_usd: Optional[float] = None
    template: Optional[str] = None
    """One question per row of `rows`: "Where is {company}?" fills {company} from each row."""
    rows: Optional[List[Dict[str, Any]]] = None
    file: Optional[str] = None
    """A batch file's text, read as `trawl submit` reads one (CSV rows with `template`)."""
