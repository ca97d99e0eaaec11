"""The report's front row and back row (``rider_rows = 2``, docs/outputs.md): classic_coaster has them."""
from __future__ import annotations


def test_the_report_shows_front_row_and_back_row(classic_run):
    """classic_coaster has rider_rows = 2: its report has the rows' table, car by car, and their chart."""
    page = (classic_run / "report.html").read_text(encoding="utf-8")
    assert "<h3>Front row and back row</h3>" in page
    table = page[page.index('<table class="rows">'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 2 + 3 and "front row" in table and "back row" in table
    assert 'id="rows-' in page or "rows-red" in page


def test_classic_coaster_front_row_floats_more_than_the_back_row(classic_run):
    """Over the airtime crest the lead car pitches nose-down: its front row is lifted more than its rider
    point, its back row less (filtered, −0.17, −0.14, −0.13 g)."""
    from trackrider.record import read_summary

    lead = read_summary(classic_run)["trains"]["red"]["rider_rows"]["cars"][0]
    assert lead["front"]["min_g_vertical"] < lead["rider"]["min_g_vertical"] < lead["rear"]["min_g_vertical"] < 0.0
