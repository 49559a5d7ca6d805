"""The exporter renders a reading ahead only for a scrape that is coming: a reader at 1 s
scraped every 15 s rendered 14 pages in 15 for no one (4 ms of CPU a second at 8 GPUs)."""

from __future__ import annotations

from gpumon.telemetry.exporter.page import Pages
from gpumon.telemetry.exporter.series import View

PROMETHEUS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _view(n: int) -> View:
    return View(None, True, f"reading {n}", True, seq=n)


def test_no_scraper_no_rendering_and_the_first_scrape_renders_what_it_takes() -> None:
    clock = Clock()
    pages = Pages("h", clock=clock)
    for n in range(30):  # 30 readings a second apart, no scrape
        pages.publish(_view(n))
        assert pages.current.renders == 0
        clock.t += 1.0
    page = pages.current
    pages.asked(PROMETHEUS, "gzip")
    assert page.body(PROMETHEUS, "gzip").data and page.renders == 1
    pages.publish(_view(30))  # a scraper is there now, its pace not known yet: ahead
    assert pages.current.renders == 1


def test_scraped_every_15_s_only_the_readings_a_scrape_takes_are_rendered_ahead() -> None:
    clock = Clock()
    pages = Pages("h", clock=clock)
    ahead, served_ready = 0, 0
    for second in range(1, 121):  # a reading every 1 s, a scrape every 15 s
        pages.publish(_view(second))
        ahead += second > 30 and pages.current.renders  # the pace is known from the 2nd scrape
        if second % 15 == 0:
            page = pages.current
            pages.asked(PROMETHEUS, "gzip")
            before = page.renders
            page.body(PROMETHEUS, "gzip")
            served_ready += second > 45 and page.renders == before  # rendered ahead: bytes only
        clock.t += 1.0
    # once the pace is known (two scrapes), each scrape finds its page rendered ahead, and
    # only the readings within 1.5 readings of a scrape are rendered: 2 of 15, not 15
    assert served_ready == 5
    assert ahead == 6 * 2


def test_a_scraper_as_fast_as_the_readings_gets_every_reading_rendered_ahead() -> None:
    clock = Clock()
    pages = Pages("h", clock=clock)
    for second in range(20):
        pages.publish(_view(second))
        if second > 3:
            assert pages.current.renders == 1
        pages.asked(PROMETHEUS, None)
        pages.current.body(PROMETHEUS, None)
        clock.t += 1.0


def test_a_scraper_that_stops_stops_the_rendering_ahead() -> None:
    clock = Clock()
    pages = Pages("h", clock=clock)
    rendered = []
    for second in range(200):  # scraped every 10 s for 50 s, then never again
        pages.publish(_view(second))
        rendered.append(pages.current.renders)
        if second <= 50 and second % 10 == 0:
            pages.asked(PROMETHEUS, None)
            pages.current.body(PROMETHEUS, None)
        clock.t += 1.0
    assert sum(rendered[75:]) == 0  # two scrapes late: gone
    lone = Pages("h", clock=clock)  # one scrape only: its pace is taken as 60 s
    lone.asked(PROMETHEUS, None)
    clock.t += 121.0
    lone.publish(_view(0))
    assert lone.current.renders == 0
