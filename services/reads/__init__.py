"""Public reads: match cards, the pages, the explorer, the day's picks and the track record, each
under the premium rule (:mod:`services.market.premium`) deciding what a caller sees."""
