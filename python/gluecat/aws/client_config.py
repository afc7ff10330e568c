"""What ``gluecat serve`` tells a user to paste so that boto3 and the AWS CLI use it."""

from __future__ import annotations

PROFILE = "gluecat"


def config_profile(url: str, region: str, ca_bundle: str | None) -> list[str]:
    """An ~/.aws/config profile that sends Glue and Lake Formation calls to ``url``.

    The endpoint is set per service (a ``services`` section), so that the profile's other services
    (S3, say) still go to AWS.
    """
    lines = [f"[profile {PROFILE}]", f"region = {region}", f"services = {PROFILE}"]
    if ca_bundle:
        lines.append(f"ca_bundle = {ca_bundle}")
    return [
        *lines,
        "",
        f"[services {PROFILE}]",
        "glue =",
        f"  endpoint_url = {url}",
        "lakeformation =",
        f"  endpoint_url = {url}",
    ]


def environment(url: str, region: str, ca_bundle: str | None) -> list[str]:
    """The same as shell exports."""
    lines = [
        f"export AWS_ENDPOINT_URL_GLUE={url}",
        f"export AWS_ENDPOINT_URL_LAKEFORMATION={url}",
        f"export AWS_DEFAULT_REGION={region}",
    ]
    if ca_bundle:
        lines.append(f"export AWS_CA_BUNDLE={ca_bundle}")
    return lines


def banner(url: str, region: str, ca_bundle: str | None, users_file: str) -> list[str]:
    """The lines ``gluecat serve`` prints after its Hive Metastore line."""
    return [
        f"AWS Glue and Lake Formation endpoint on {url} (region {region}).",
        "For boto3 and the AWS CLI, in ~/.aws/config:",
        "",
        *config_profile(url, region, ca_bundle),
        "",
        "or in the environment:",
        "",
        *environment(url, region, ca_bundle),
        "",
        f"with an access key from 'gluecat users add NAME --file {users_file} --access-key' in "
        "~/.aws/credentials (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).",
    ]
