"""Trails: the records a parsed trail file becomes (`model`), the grammar of both formats
(`grammar`), the strict parse gate (`parse/`), `runIf` and argument tokens."""
