"""Query pieces every listing shares: a page of a query, a time range on a column."""


def paginate(query, page: int, page_size: int) -> dict:
    """One page of ``query`` (already ordered) with the paging fields of a page answer."""
    return {
        "items": list(query.paginate(page, page_size)),
        "page": page,
        "page_size": page_size,
        "total": query.count(),
    }


def within(query, column, since=None, until=None):
    """``query`` limited to rows whose ``column`` lies in the range the date arguments name.

    ``since`` and ``until`` are spans (see ``schemas.common.Span``): a bare date covers its whole
    UTC day, so ``until=2026-11-21`` includes 23:59 that day; a date-time is one instant.
    """
    if since is not None:
        query = query.where(column >= since.start)
    if until is not None:
        query = query.where(column <= until.start if until.instant else column < until.end)
    return query
