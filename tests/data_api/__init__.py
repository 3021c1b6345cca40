"""The Pro Data API: catalog, match feed, exports and what outlives a request."""
