"""Tables' data files as the catalog keeps them: where a table's and a partition's folders are, how
writes, overwrites, renames and drops move and delete them (files.py), what maintenance reads from them
(maintenance.py: MSCK REPAIR, partition renames and locations), and the refusals these raise
(refusals.py). Every front end that changes tables' data (Spark's catalog, the Hive Metastore's write
calls) goes through them, so the same rules hold whichever way a client comes in."""
