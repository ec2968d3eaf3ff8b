"""Draft datasets: the store, importing items with their evidence located in a KB snapshot, and
remapping evidence onto another snapshot."""

from curate.dataset.importer import import_items
from curate.dataset.remap import remap
from curate.dataset.store import DatasetStore, check_current, check_name, items_digest, parse_ref

__all__ = ["DatasetStore", "check_current", "check_name", "import_items", "items_digest", "parse_ref", "remap"]
