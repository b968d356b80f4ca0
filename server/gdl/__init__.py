"""GDL rules engine."""
