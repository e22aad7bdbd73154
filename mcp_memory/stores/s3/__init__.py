"""The AWS backend: memories in S3 Vectors, what changes in an ordinary S3 bucket (docs/storage.md).

The reference's storage (seed 000): two buckets and no database. Its modules are imported only
when this backend is chosen, so boto3 stays out of every other deployment (tests/test_aws_imports.py).
"""
