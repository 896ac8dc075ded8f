"""The check: the orchestrator (`run`) and its stages, in pipeline order: `discover`, `resolve`,
`surfaces`, `parse` (on `workers`, over the trail `rows`), `typegate/`, `report`.

Beside the stages: `context` (what every stage reads), `shard` (split and merge) and
`crosstrail` (findings across trails). Nothing is imported here: a module that needs one stage
loads only that stage."""
