"""Immutable releases: written once (`store`), read back with every hash checked (`load`),
compared (`changes`, `diff`) and exported (`export`)."""

from curate.release.changes import changes, counts
from curate.release.diff import diff
from curate.release.export import EXPORT_FORMATS, export
from curate.release.load import load_release
from curate.release.store import SPLIT_FILES, Releases, release, resolve_items

__all__ = ["EXPORT_FORMATS", "Releases", "SPLIT_FILES", "changes", "counts", "diff", "export", "load_release",
           "release", "resolve_items"]
