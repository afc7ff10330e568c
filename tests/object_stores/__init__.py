"""Object-store servers for the tests and benchmarks of the warehouse on S3, GCS and Azure."""
