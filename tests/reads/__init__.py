"""The public reads: match cards, the HTML pages (in a real browser too), the track record."""
