"""The Hive Metastore's Thrift types and service, built from hive_metastore.thrift when first imported
(hms/idl.py): nothing here is generated ahead of time or vendored."""
