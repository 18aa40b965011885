"""The Scrapy side of scripts/bench-fetch: fetch a URL list with Scrapy under the same per-host
limits as trawl, and print one JSON line: pages, pages fetched, wall and CPU seconds.

Usage: python bench_fetch_scrapy.py URLS_FILE INTERVAL_MS CONCURRENCY

Every `*.test` name resolves to 127.0.0.1 (the URLs carry simweb's port), so each host keeps
its own download slot and its own persistent connection, as with trawl. Through simweb as an
HTTP proxy instead, Scrapy would keep one idle connection for all hosts together (its pool
allows CONCURRENT_REQUESTS_PER_DOMAIN per proxy) and reconnect for most requests.
"""

import json
import resource
import sys
import time

from scrapy import Request, Spider, signals
from scrapy.crawler import CrawlerProcess
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer


class BenchResolver(CachingThreadedResolver):
    """`*.test` is simweb on 127.0.0.1, as trawl's `fetch.resolve` says; anything else as usual."""

    def getHostByName(self, name, timeout=()):  # noqa: N802 (Twisted's name)
        if name.endswith(".test"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)


def cpu_secs():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Count:
    """The item pipeline: counts pages and bytes, nothing else."""

    pages = 0
    bytes = 0
    chars = 0
    last = 0.0

    def process_item(self, item, spider=None):
        Count.pages += 1
        Count.bytes += item["bytes"]
        Count.chars += item["chars"]
        Count.last = time.monotonic()
        return item


class BenchSpider(Spider):
    name = "bench"

    def __init__(self, urls, **kwargs):
        super().__init__(**kwargs)
        self.urls = urls
        self.clock = {}

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.opened, signal=signals.spider_opened)
        crawler.signals.connect(spider.closed_, signal=signals.spider_closed)
        return spider

    def opened(self, spider):
        self.clock["start"] = (time.monotonic(), cpu_secs())

    def closed_(self, spider, reason):
        self.clock["end"] = (time.monotonic(), cpu_secs())
        self.clock["reason"] = reason

    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, dont_filter=True)

    def start_requests(self):  # Scrapy before 2.13
        for url in self.urls:
            yield Request(url, callback=self.parse, dont_filter=True)

    def parse(self, response):
        # trawl decodes every body to text (header charset, else <meta>, else UTF-8); so does
        # response.text.
        text = response.text
        yield {"bytes": len(response.body), "chars": len(text)}


def main():
    urls_file, interval_ms, concurrency = sys.argv[1:4]
    with open(urls_file) as f:
        urls = [line.strip() for line in f if line.strip()]
    settings = {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOAD_DELAY": int(interval_ms) / 1000.0,
        "DOWNLOAD_DELAY_JITTER": 0,  # was RANDOMIZE_DOWNLOAD_DELAY=False
        "CONCURRENT_REQUESTS": int(concurrency),
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "AUTOTHROTTLE_ENABLED": False,
        "HTTPCACHE_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 20,
        "DOWNLOAD_MAXSIZE": 10 * 1024 * 1024,
        "DOWNLOAD_WARNSIZE": 0,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        # One item per page: nothing to process in parallel per response. Scrapy's default of
        # 100 starts 100 item workers for every response, which halved its throughput here.
        "CONCURRENT_ITEMS": 1,
        "TWISTED_DNS_RESOLVER": BenchResolver,
        "ITEM_PIPELINES": {Count: 100},
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(BenchSpider)
    process.crawl(crawler, urls=urls)
    process.start()
    spider = crawler.spider
    if spider is None or "end" not in spider.clock:
        sys.exit("bench_fetch_scrapy: the crawl did not run; see the errors above")
    (t0, c0), (t1, c1) = spider.clock["start"], spider.clock["end"]
    stats = crawler.stats.get_stats()
    print(
        json.dumps(
            {
                "pages": len(urls),
                "ok": Count.pages,
                "secs": t1 - t0,
                "secs_to_last_page": Count.last - t0,
                "cpu_secs": c1 - c0,
                "bytes": Count.bytes,
                "robots_requests": stats.get("robotstxt/request_count", 0),
                "statuses": {
                    k.rsplit("/", 1)[1]: v
                    for k, v in stats.items()
                    if k.startswith("downloader/response_status_count/")
                },
                "close_reason": spider.clock.get("reason"),
            }
        )
    )


if __name__ == "__main__":
    main()
