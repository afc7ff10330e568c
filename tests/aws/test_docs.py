"""docs/aws-endpoint.md says what the code does: the lines it shows `gluecat serve` printing are the
ones it prints (tests/docs runs its commands)."""

from __future__ import annotations

from pathlib import Path

from gluecat.aws.client_config import banner

DOC = Path(__file__).parents[2] / "docs" / "aws-endpoint.md"


def blocks(language: str) -> list[str]:
    """The document's fenced blocks of one language ("" for the plain ones)."""
    found, current, lang = [], None, ""
    for line in DOC.read_text().splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, lang = [], line[3:].strip()
            else:
                if lang == language:
                    found.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return found


def test_the_printed_configuration_is_what_serve_prints() -> None:
    shown = next(block for block in blocks("") if block.startswith("AWS Glue and Lake Formation endpoint"))
    printed = banner("https://127.0.0.1:9443", "us-east-1", "/home/alice/gluecat/cert.pem", "users.json")
    assert shown.rstrip("\n").splitlines() == printed[: len(shown.rstrip("\n").splitlines())]
    assert len(shown.splitlines()) == len(printed) - 2  # all but the closing hint about keys
