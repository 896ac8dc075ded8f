"""What outlives a run: the state store, the per-trail result cache, the scratch directory's layout
and the remote cache client."""
