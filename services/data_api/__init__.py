"""The Data API: its catalog, the match feed and exports."""
