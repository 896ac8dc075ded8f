"""What outlives a run: the state store, the per-trail result cache, the scratch directory's layout
and the remote cache client; every key and digest they are addressed by (`keys`), and the
garbage collector's pause for the work that fills them (`gcpause`)."""
