"""Meta-tools (placeholder while building)."""
