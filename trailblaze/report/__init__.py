"""The outcome of a check as data (`record`) and every way it is shown: the console, the CI formats,
code frames, paths as the reader sees them, and the escaping each output needs."""
