"""The test stand-ins in tests/support/moto_endpoint.py do what their docstrings say.

They answer the AWS backend's queries in every S3 test, so a stand-in that
matched too much (or too little) would make those tests prove nothing.
"""

from __future__ import annotations

import pytest
from moto.s3vectors.exceptions import ValidationError

from tests.support.moto_endpoint import NON_FILTERABLE, AwsPlace, matches

NOTE = {"tenantId": "acme", "scope": "conversation", "conversation": "chat:1", "tags": ["a", "b"], "n": 3}
PROJECT = {"tenantId": "acme", "memoryType": "project"}
NONE: set[str] = set()


@pytest.mark.parametrize(
    ("where", "metadata", "expected"),
    [
        ({"tenantId": "acme"}, PROJECT, True),
        ({"tenantId": "globex"}, PROJECT, False),
        ({"tenantId": {"$eq": "acme"}}, PROJECT, True),
        ({"scope": {"$exists": False}}, PROJECT, True),
        ({"scope": {"$exists": False}}, NOTE, False),
        ({"scope": {"$exists": True}}, NOTE, True),
        ({"tags": {"$eq": "b"}}, NOTE, True),
        ({"tags": {"$eq": "c"}}, NOTE, False),
        ({"scope": {"$ne": "conversation"}}, PROJECT, True),
        ({"scope": {"$ne": "conversation"}}, NOTE, False),
        ({"conversation": {"$in": ["chat:2", "chat:1"]}}, NOTE, True),
        ({"conversation": {"$nin": ["chat:2", "chat:1"]}}, NOTE, False),
        ({"n": {"$gt": 2, "$lte": 3}}, NOTE, True),
        ({"n": {"$lt": 3}}, NOTE, False),
        ({"n": {"$eq": True}}, {"n": 1}, False),
        ({"$and": [{"tenantId": {"$eq": "acme"}}, {"conversation": {"$eq": "chat:1"}}]}, NOTE, True),
        ({"$and": [{"tenantId": {"$eq": "acme"}}, {"conversation": {"$eq": "chat:2"}}]}, NOTE, False),
        ({"$or": [{"scope": {"$exists": False}}, {"conversation": {"$eq": "chat:1"}}]}, NOTE, True),
        ({"$or": [{"scope": {"$exists": False}}, {"conversation": {"$eq": "chat:2"}}]}, NOTE, False),
    ],
)
def test_the_filter_stand_in_applies_the_documented_operators(where: dict, metadata: dict, expected: bool) -> None:
    assert matches(where, metadata, NONE) is expected


@pytest.mark.parametrize(
    "where",
    [
        {"content": {"$eq": "x"}},
        {"$and": [{"tenantId": "acme"}, {"tags": "a"}]},
        {"x": {"$regex": "a"}},
        {"$and": []},
        {"x": {"$in": []}},
        {},
    ],
    ids=["non-filterable", "nested-non-filterable", "unknown-operator", "empty-and", "empty-in", "empty"],
)
def test_the_filter_stand_in_refuses_what_s3_vectors_refuses(where: dict) -> None:
    with pytest.raises(ValidationError):
        matches(where, {"tenantId": "acme"}, set(NON_FILTERABLE))


def test_the_query_stand_in_ranks_by_cosine_distance_over_http_and_keeps_aws_limits(aws: AwsPlace) -> None:
    client = aws.client("s3vectors")
    where = {"vectorBucketName": aws.vector_bucket, "indexName": aws.index}
    axis = [[1.0 if i == j else 0.0 for i in range(8)] for j in range(3)]
    client.put_vectors(
        **where,
        vectors=[
            {"key": "acme#near", "data": {"float32": axis[0]}, "metadata": {"tenantId": "acme"}},
            {"key": "acme#far", "data": {"float32": [-x for x in axis[0]]}, "metadata": {"tenantId": "acme"}},
            {
                "key": "acme#side",
                "data": {"float32": axis[1]},
                "metadata": {"tenantId": "acme", "scope": "conversation"},
            },
            {"key": "globex#near", "data": {"float32": axis[0]}, "metadata": {"tenantId": "globex"}},
        ],
    )

    answer = client.query_vectors(
        **where, topK=5, queryVector={"float32": axis[0]}, filter={"tenantId": "acme"}, returnDistance=True
    )
    unscoped = client.query_vectors(
        **where,
        topK=1,
        queryVector={"float32": axis[1]},
        filter={"$and": [{"tenantId": {"$eq": "acme"}}, {"scope": {"$exists": False}}]},
    )

    assert [(v["key"], round(v["distance"], 6)) for v in answer["vectors"]] == [
        ("acme#near", 0.0),
        ("acme#side", 1.0),
        ("acme#far", 2.0),
    ]
    assert answer["distanceMetric"] == "cosine" and "metadata" not in answer["vectors"][0]
    assert [v["key"] for v in unscoped["vectors"]] == ["acme#near"]
    with pytest.raises(client.exceptions.ValidationException, match="topK"):
        client.query_vectors(**where, topK=101, queryVector={"float32": axis[0]})
    with pytest.raises(client.exceptions.ValidationException, match="not filterable"):
        client.query_vectors(**where, topK=1, queryVector={"float32": axis[0]}, filter={"content": "x"})
    with pytest.raises(client.exceptions.ValidationException, match="empty array"):
        client.put_vectors(
            **where,
            vectors=[{"key": "acme#e", "data": {"float32": axis[2]}, "metadata": {"tenantId": "acme", "tags": []}}],
        )


def test_the_endpoint_reports_the_index_metadata_configuration(aws: AwsPlace) -> None:
    index = aws.client("s3vectors").get_index(vectorBucketName=aws.vector_bucket, indexName=aws.index)["index"]

    assert index["metadataConfiguration"] == {"nonFilterableMetadataKeys": NON_FILTERABLE}
    assert (index["dimension"], index["distanceMetric"], index["dataType"]) == (8, "cosine", "float32")
