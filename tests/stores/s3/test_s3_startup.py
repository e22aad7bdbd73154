"""Opening the AWS backend: what is checked before anything is served (docs/storage.md, issue 5).

An index that does not fit, or a bucket or index that is not there, stops the
process at start-up with a message naming what to change — not a failure
inside someone's agent run later.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.credentials import CredentialResolver

from mcp_memory.core.errors import StartupError
from mcp_memory.stores.s3.store import open_s3
from mcp_memory.stores.section import StoreSection
from tests.support.moto_endpoint import REGION, AwsPlace, make_place

REPO = Path(__file__).resolve().parents[3]


def settings_for(place: AwsPlace, embedding_dim: int | None = None, **overrides: Any) -> tuple[StoreSection, int]:
    """The store section of `place`, and the width of the vectors it is opened for."""
    values: dict[str, Any] = {
        "backend": "s3",
        "vector_bucket": place.vector_bucket,
        "vector_index": place.index,
        "state_bucket": place.state_bucket,
        "aws_region": REGION,
    }
    values.update(overrides)
    return StoreSection(**values), place.dim if embedding_dim is None else embedding_dim


async def refusal(place: AwsPlace, session: Any = None, **overrides: Any) -> str:
    with pytest.raises(StartupError) as caught:
        vectors, objects = await open_s3(
            *settings_for(place, **overrides), session=session or place.session, endpoint_url=place.endpoint
        )
        await vectors.close()
        await objects.close()
    return str(caught.value)


async def test_an_index_that_fits_opens(aws: AwsPlace) -> None:
    vectors, objects = await open_s3(*settings_for(aws), session=aws.session, endpoint_url=aws.endpoint)
    try:
        assert (vectors.bucket, vectors.index, objects.bucket) == (aws.vector_bucket, "memories", aws.state_bucket)
    finally:
        await vectors.close()
        await objects.close()


async def test_an_index_of_another_dimension_is_refused_naming_both_ways_out(aws_endpoint: str) -> None:
    place = make_place(aws_endpoint, dim=16)

    message = await refusal(place, embedding_dim=8)

    assert 'index "memories" holds 16-dimensional vectors but EMBEDDING_DIM is 8' in message
    assert "set EMBEDDING_DIM=16" in message and "--dimension 8" in message


async def test_an_index_with_another_metric_is_refused(aws_endpoint: str) -> None:
    message = await refusal(make_place(aws_endpoint, metric="euclidean"))

    assert "uses the euclidean distance metric but mcp-memory needs cosine" in message
    assert "--distance-metric cosine" in message


@pytest.mark.parametrize(
    ("keys", "shown"),
    [(None, "[none]"), (["content", "tags"], "[content, tags]"), ([*"abcd"], "[a, b, c, d]")],
    ids=["none", "too-few", "others"],
)
async def test_an_index_without_exactly_the_four_non_filterable_keys_is_refused(
    aws_endpoint: str, keys: list[str] | None, shown: str
) -> None:
    message = await refusal(make_place(aws_endpoint, non_filterable=keys))

    assert (
        f"non-filterable metadata keys {shown} but they must be exactly content, createdAt, tags, trustBase" in message
    )
    assert '"nonFilterableMetadataKeys":["content","createdAt","tags","trustBase"]' in message


async def test_every_mismatch_is_named_at_once(aws_endpoint: str) -> None:
    message = await refusal(make_place(aws_endpoint, dim=16, metric="euclidean"), embedding_dim=8)

    assert "EMBEDDING_DIM is 8" in message and "euclidean" in message


async def test_a_missing_index_is_refused_naming_vector_index_and_how_to_create_it(aws: AwsPlace) -> None:
    message = await refusal(aws, vector_index="recall")

    assert (
        f'the S3 Vectors index "recall" (VECTOR_INDEX) does not exist in vector bucket "{aws.vector_bucket}"' in message
    )
    assert "aws s3vectors create-index" in message and "--dimension 8 --distance-metric cosine" in message


async def test_a_missing_vector_bucket_is_refused_naming_vector_bucket(aws: AwsPlace) -> None:
    message = await refusal(aws, vector_bucket="no-such-vectors")

    assert 'the S3 Vectors bucket "no-such-vectors" (VECTOR_BUCKET) does not exist in us-east-1' in message
    assert "create-vector-bucket" in message


async def test_a_missing_state_bucket_is_refused_naming_state_bucket(aws: AwsPlace) -> None:
    message = await refusal(aws, state_bucket="no-such-state")

    assert 'the S3 bucket "no-such-state" (STATE_BUCKET) does not exist' in message


async def test_a_malformed_region_is_refused_naming_aws_region(aws: AwsPlace) -> None:
    message = await refusal(aws, aws_region="seoul please")

    assert message == 'AWS_REGION must be an AWS region name such as ap-northeast-2, got "seoul please"'


async def test_no_credentials_is_refused_naming_the_standard_chain(aws: AwsPlace) -> None:
    core = botocore.session.Session()
    core.register_component("credential_provider", CredentialResolver(providers=[]))
    session = boto3.session.Session(botocore_session=core, region_name=REGION)

    message = await refusal(aws, session=session)

    assert "no AWS credentials were found" in message and "standard AWS chain" in message
    assert "AWS_ACCESS_KEY_ID" in message  # where to put them, by name


async def test_a_refusal_never_carries_the_credentials(aws: AwsPlace) -> None:
    session = boto3.session.Session(
        aws_access_key_id="AKIAEXAMPLEKEYID0000",
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRET",
        aws_session_token="FwoGZXIvYXdzEXAMPLETOKEN",
        region_name=REGION,
    )

    message = await refusal(aws, session=session, vector_index="recall")

    for secret in ("AKIAEXAMPLEKEYID0000", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRET", "FwoGZXIvYXdzEXAMPLETOKEN"):
        assert secret not in message


# --------------------------------------------------------------------------- open_stores, as a deployment runs it


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def deployment_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A process environment with nothing of the developer's AWS setup in it."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
    return {
        **keep,
        "HOME": str(tmp_path),
        "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        **extra,
    }


def test_open_stores_reaches_the_endpoint_named_by_aws_endpoint_url(aws: AwsPlace, tmp_path: Path) -> None:
    env = deployment_env(
        tmp_path,
        VECTOR_BUCKET=aws.vector_bucket,
        STATE_BUCKET=aws.state_bucket,
        EMBEDDING_PROVIDER="fake",
        EMBEDDING_DIM="8",
        AWS_REGION=REGION,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_ENDPOINT_URL=aws.endpoint,
    )
    result = run_python(
        """
        import asyncio, json
        from mcp_memory.config import Settings
        from mcp_memory.stores import open_stores

        async def main():
            settings = Settings.from_env()
            vectors, objects = await open_stores(settings.store, settings.embedding.embedding_model, settings.embedding.embedding_dim)
            try:
                await objects.put("index/acme/probe", "")
                print(json.dumps([settings.store.backend, type(vectors).__name__, type(objects).__name__,
                                  await objects.list("index/")]))
            finally:
                await vectors.close()
                await objects.close()

        asyncio.run(main())
        """,
        env,
    )

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == ["s3", "S3VectorStore", "S3ObjectStore", ["index/acme/probe"]]


def test_open_stores_without_boto3_says_which_extra_to_install(tmp_path: Path) -> None:
    result = run_python(
        """
        import asyncio, importlib.abc, sys

        class NotInstalled(importlib.abc.MetaPathFinder):  # as if the aws extra were not installed
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in ("boto3", "botocore"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)

        sys.meta_path.insert(0, NotInstalled())
        from mcp_memory.core.errors import StartupError
        from mcp_memory.stores import open_stores
        from mcp_memory.stores.section import StoreSection

        try:
            asyncio.run(open_stores(StoreSection(backend="s3", vector_bucket="v", state_bucket="s"), "m", 1024))
        except StartupError as error:
            print(error)
        """,
        deployment_env(tmp_path),
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "the S3 backend needs boto3: from a checkout, pip install '.[aws]' "
        "(once released: pip install 'mcp-tenant-memory[aws]')"
    )


# --------------------------------------------------------------------------- the CLI on the AWS backend


def cli_env(place: AwsPlace, tmp_path: Path, **extra: str) -> dict[str, str]:
    return deployment_env(
        tmp_path,
        PYTHONPATH=str(REPO),
        VECTOR_BUCKET=place.vector_bucket,
        STATE_BUCKET=place.state_bucket,
        EMBEDDING_PROVIDER="fake",
        EMBEDDING_DIM="64",
        AWS_REGION=REGION,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_ENDPOINT_URL=place.endpoint,
        **extra,
    )


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_memory", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_cli_remembers_and_recalls_through_the_buckets(aws_endpoint: str, tmp_path: Path) -> None:
    env = cli_env(make_place(aws_endpoint, dim=64), tmp_path)

    stored = cli(
        env, "remember", "--tenant", "acme", "Release trains leave the station every Tuesday morning", "--json"
    )
    recalled = cli(env, "recall", "--tenant", "acme", "when do release trains leave the station", "--json")

    assert stored.returncode == 0, stored.stderr
    assert recalled.returncode == 0, recalled.stderr
    assert "Release trains leave the station every Tuesday morning" in recalled.stdout
    remembered = json.loads(stored.stdout)
    assert remembered["created"] is True and remembered["memory"]["id"] in recalled.stdout


def test_the_cli_refuses_to_start_on_an_index_that_does_not_fit(aws_endpoint: str, tmp_path: Path) -> None:
    env = cli_env(make_place(aws_endpoint, dim=1024), tmp_path)

    result = cli(env, "stats", "--tenant", "acme")

    assert result.returncode == 1
    assert result.stderr.startswith('error: the S3 Vectors index "memories" holds 1024-dimensional vectors')
    assert "EMBEDDING_DIM is 64" in result.stderr and "testing" not in result.stderr


@pytest.mark.parametrize(
    ("code", "status", "hint"),
    [("AccessDeniedException", 403, True), ("InternalServerException", 500, False)],
    ids=["denied", "outage"],
)
async def test_an_index_that_cannot_be_read_is_refused_naming_the_call_and_only_then_the_permission(
    code: str, status: int, hint: bool
) -> None:
    from botocore.stub import Stubber

    from mcp_memory.stores.s3.errors import s3_calls
    from mcp_memory.stores.s3.startup import check_index, make_clients
    from tests.support.moto_endpoint import signing_session

    vectors_client, s3_client = make_clients(REGION, session=signing_session())
    s3_client.close()
    store = StoreSection(backend="s3", vector_bucket="vectors", state_bucket="state")
    try:
        with Stubber(vectors_client) as stubber:
            stubber.add_client_error("get_index", code, "no", status)
            with pytest.raises(StartupError) as caught:
                await check_index(s3_calls(vectors_client, "s3vectors"), store, 8)
    finally:
        vectors_client.close()

    message = str(caught.value)
    assert message.startswith(
        f'cannot reach the S3 Vectors index "memories" in bucket "vectors": GetIndex failed: {code}'
    )
    assert ("s3vectors:GetIndex" in message) is hint
