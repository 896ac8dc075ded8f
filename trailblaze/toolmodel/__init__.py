"""Which tools a trail may call: the framework catalog, `trailmap.yaml` manifests, trailmaps that
ship in packages (`bundled`), the tools a trailmap defines (`tooldefs/`), and the per-trailmap
resolution of all of them (`resolution`)."""
