"""The record: settlement of picks, the signed append-only log of live picks, publishing to it as
one unit of work (sign, then time-stamp after the commit), and third-party time-stamps."""
