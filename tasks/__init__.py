"""doit tasks of this repository: the product's tasks bound to the bundled workspace, plus the
project's own development tasks."""
