"""The client's exceptions: every failure is a TrawlError, so one `except` covers them all."""

from typing import Optional


class TrawlError(Exception):
    """A request failed.

    `status` is the HTTP status (None when no HTTP answer came: unreachable server, broken
    connection, timeout); `code` is the API's stable error code (`unauthorized`,
    `invalid_request`, `rate_limited` …) or one of the client's own (`transport`,
    `bad_response`, `version_mismatch`, `timeout`); `message` says what to do; `endpoint` is the
    request that failed, as `METHOD /path`.
    """

    def __init__(
        self,
        message: str,
        status: Optional[int] = None,
        code: str = "error",
        endpoint: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        self.message = message
        self.status = status
        self.code = code
        self.endpoint = endpoint
        self.retry_after = retry_after
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.endpoint}: " if self.endpoint else ""
        what = f"{self.status} {self.code}" if self.status is not None else self.code
        return f"{where}{what}: {self.message}"


class TrawlDecodeError(TrawlError, ValueError):
    """A JSON value is not the model expected: a required field is missing or mistyped.

    Also a ValueError, since `Model.from_json` raises it for bad input without any request.
    """

    def __init__(self, message: str, endpoint: Optional[str] = None, status: Optional[int] = None):
        super().__init__(message, status=status, code="bad_response", endpoint=endpoint)


class TrawlVersionError(TrawlError):
    """The server speaks another API version than this client was built for (or none)."""

    def __init__(self, message: str, server_version: Optional[str] = None) -> None:
        self.server_version = server_version
        super().__init__(message, code="version_mismatch", endpoint="GET /openapi.json")


class TrawlTimeoutError(TrawlError, TimeoutError):
    """`wait` gave up before the batch ended; `last` is the batch's last status seen."""

    def __init__(self, message: str, endpoint: Optional[str] = None, last: object = None) -> None:
        self.last = last
        super().__init__(message, code="timeout", endpoint=endpoint)
