"""The located YAML layer: bytes to text (`text`), a tree of frozen nodes that keep their line,
column and quote style (`node`), plain scalars (`plain`), and JSON Schema validation that points at
the node at fault (`schema`)."""
