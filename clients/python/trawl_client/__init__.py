"""A client of trawl's HTTP API (`trawl serve`): research questions in, cited reports out.

    from trawl_client import Client
    client = Client()  # TRAWL_API_URL, TRAWL_API_TOKEN
    job = client.research("How do quorum queues handle poison messages?", max_urls=5)
    print(job.report)

Standard library only. See README.md for batches, progress, results and errors.
"""

from .client import API_VERSION, Client, __version__
from .errors import TrawlDecodeError, TrawlError, TrawlTimeoutError, TrawlVersionError
from .models import (
    BatchCreated, BatchEvent, BatchIn, BatchPage, BatchStatus, CitationView, ErrorBody,
    ErrorDetail, Job, JobOptions, JobPage, JobRef, JobResult, JobSummary, Model, Question,
    ReportView, TokenInfo,
)

__all__ = [
    "API_VERSION", "Client", "__version__",
    "TrawlError", "TrawlDecodeError", "TrawlTimeoutError", "TrawlVersionError",
    "BatchCreated", "BatchEvent", "BatchIn", "BatchPage", "BatchStatus", "CitationView",
    "ErrorBody", "ErrorDetail", "Job", "JobOptions", "JobPage", "JobRef", "JobResult",
    "JobSummary", "Model", "Question", "ReportView", "TokenInfo",
]
