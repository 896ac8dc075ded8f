"""Runs bigger than one check: many workspaces in one repository (`monorepo`), a whole run in the
remote cache (`runcache/`) and the trail rows it brings back (`rows`)."""
