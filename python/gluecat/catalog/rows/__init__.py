"""The row engine: sets of rows keyed by partition values (a table's partitions, a governed table's
objects), stored as segments in the warehouse and queried through folded views.

One ``RowEngine`` per store (the catalog Context's ``rows``) owns the in-memory state: each row set's
latest view, the refolds running for them, the merge thread and the queues of writes that share a
commit. The Glue rules (what a partition is, what an object is) are the domain modules' (partitions,
objects); this package only stores, merges and finds rows.

Glossary:

- *segment*: an immutable file (or a commit's inline block) of rows in commit order; a later row of an
  identity overrides an earlier one, and a *tombstone* row (``_tomb``) deletes it (segments.py).
- *identity*: what makes a row itself, ``_vk``: its partition values (and, for an object, its Uri) as
  a compact JSON array; rows are sorted by it.
- *view*: a row set at one list of segments, as a *base* (the live rows of the older segments,
  deduplicated and sorted by identity, with index lookup structures) plus *deltas* (the newer segments,
  read as they are) (view.py).
- *fold*: build a view's base from segments. *extend*: add newer segments to a view as deltas, sharing
  its base. *refold*: fold a view's deltas into its base (in the background, latest.py). *squash*: join
  a view's newest deltas into one, copying no row.
- *merge*: replace a run of a row set's segments in the store by one segment holding their newest rows,
  in the run's place (merging.py). *compact*: merge all of them into one sorted segment with no
  deletions.
- *group commit*: writes to one row set that queue behind a commit in flight share the next one
  (group_commit.py).
- *query*: a predicate on partition values planned against partition indexes, and a window of the
  matching rows (query.py).
"""

from gluecat.catalog.rows.engine import RowEngine

__all__ = ["RowEngine"]
