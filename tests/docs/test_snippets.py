"""README.md's and docs/*.md's snippets, run as a user pasting them in order would run them.

This module finds the documents itself (README.md and every docs/*.md: a new doc is covered the day it
is written) and reads their fenced blocks. A document's runnable blocks run in order, in a fresh
folder, through one bash process, as in one terminal; a block that fails (a command exits non-zero, a
python block raises, a server does not start, a printed line is not the one shown) fails the
document's test, which names the block, its line and what it printed.

What runs:

- ```sh blocks (also ```bash, ```shell): their text, as it is, through bash with ``set -e`` (a failing
  command stops the document). ``cd``, ``export`` and variables carry over to the blocks after them.
- ```python blocks: each as a script of its own, run by ``python`` (the tests' environment, first on
  PATH) in the shell's current folder and environment.
- No other block: plain ```, ```sql, ```ini and the like are read, not run.

What the test must know and a reader need not see is said in an HTML comment on the line right before
the block's opening fence, ``<!-- doc-test: ... -->`` (invisible once the Markdown is rendered):

- ``server PORT [PORT ...]``: the block starts a server that runs until stopped (the document tells the
  reader to use a second terminal). It runs in the background; the document goes on once each PORT
  accepts connections, and the server is stopped when the document ends. Each PORT number is replaced,
  in all of the document's runnable blocks, by a free port, so that documents run beside other tests:
  give a server's ports in its command, not by its defaults.
- ``expect``: the block (of any language) is what the runnable block right above it prints: its lines
  (but blank ones at its ends) must be lines of that block's standard output, together and in order.
- ``output``: an ```sh or ```python block that shows output, not input: not run.
- ``skip: REASON``: not run, for the reason given (it runs the whole test suite, say). The ``gluecat``
  commands of a skipped shell block are still parsed, as every shell block's are.
- ``python CLIENT``: a python block for a client that cannot share the tests' environment
  (``awswrangler``), run by the python of that client's own environment (tests/clients.py), as a user
  who installed that client would run it.
- ``instead: COMMAND``: run COMMAND, with which the block must end, instead of the whole block.

How a run differs from a user's:

- The fresh folder is not a clone of the repository, and its ``.venv`` is a link to the environment the
  tests run in, which ``pip install -e '.[test]'`` made from this checkout. So README's first command
  is run without its install (``instead``: ``python3 -m venv .venv && .venv/bin/pip install -q -e .``
  is not repeated), and its demo runs in an environment that holds the test extras too. The same
  environment is first on PATH (as for a user who activated it), for the docs that say plain
  ``gluecat``, ``python``, ``aws`` or ``spark-sql``.
- HOME is a new, empty folder (no ``~/.aws`` of the machine's user) and no ``AWS_*`` or ``WR_*`` variable
  is set: a new user's account. ``SPARK_LOCAL_IP=127.0.0.1`` keeps Spark's listeners on loopback.
- Servers' ports, as said under ``server``.

After README's run, every file it left in the folder must be one that .gitignore ignores (in a clone,
README's commands leave nothing for ``git status`` to show).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gluecat.cli import build_parser
from gluecat.hms.reference import free_port
from gluecat.serve_cli import DEFAULT_PORT
from tests.clients import REQUIREMENTS, client_environment

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = frozenset({"sh", "bash", "shell"})
RUNNABLE = SHELL | {"python"}
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<language>[^`]*)$")
DIRECTIVE = re.compile(r"^\s*<!--\s*doc-test:\s*(?P<text>.*?)\s*-->\s*$")
DOC_TIMEOUT = 900  # seconds for one document: Spark's sessions take tens of seconds on a busy machine


class MarkupError(Exception):
    """A ``doc-test`` comment the test cannot follow."""


@dataclass
class Block:
    doc: Path
    line: int
    """The line of the opening fence (1-based)."""
    language: str
    text: str
    directive: str | None = None

    @property
    def where(self) -> str:
        return f"{doc_name(self.doc)} line {self.line}"


def doc_name(doc: Path) -> str:
    """The document's path as the repository names it."""
    return str(doc.relative_to(ROOT)) if doc.is_relative_to(ROOT) else str(doc)


def blocks(doc: Path) -> list[Block]:
    """The document's fenced blocks, each with the ``doc-test`` comment right before it, if any; a
    ``doc-test`` comment anywhere else is a MarkupError (it would be silently ignored)."""
    lines = doc.read_text().splitlines()
    found: list[Block] = []
    directive_lines: set[int] = set()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent = opening["indent"]
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise MarkupError(f"{doc_name(doc)} line {i + 1}: the block is never closed")
        body = [line.removeprefix(indent) for line in lines[i + 1 : end]]
        directive = DIRECTIVE.match(lines[i - 1]) if i > 0 else None
        if directive is not None:
            directive_lines.add(i - 1)
        found.append(
            Block(
                doc,
                i + 1,
                opening["language"].strip().lower(),
                "\n".join(body) + "\n",
                directive["text"] if directive else None,
            )
        )
        i = end + 1
    for number, line in enumerate(lines):
        if "doc-test:" in line and number not in directive_lines:
            raise MarkupError(
                f"{doc_name(doc)} line {number + 1}: a doc-test comment must be a line of its own "
                "right before a block's opening fence"
            )
    return found


@dataclass
class Step:
    """One block as the test treats it."""

    block: Block
    kind: str
    """shell, python, server, expect or skip."""
    text: str = ""
    """What runs (shell, server: the shell text; python: the script)."""
    python: str = "python"
    ports: list[int] = field(default_factory=list)
    reason: str = ""
    shows: Step | None = None
    """For an expect step: the step whose output it shows."""
    captured: bool = False
    """Whether its output is kept for an expect step."""


def steps(doc: Path) -> list[Step]:
    """The document's blocks as steps, with the markup checked."""
    out: list[Step] = []
    for block in blocks(doc):
        directive = block.directive or ""
        word, _, rest = directive.partition(" ")
        word = word.rstrip(":")
        runnable = block.language in RUNNABLE
        if directive and word != "expect" and not runnable:
            raise MarkupError(
                f"{block.where}: '{directive}' on a ```{block.language} block, which is never run"
            )
        kind = "shell" if block.language in SHELL else "python"
        if not directive:
            if runnable:
                out.append(Step(block, kind, block.text))
        elif word == "expect":
            before = next((s for s in reversed(out) if s.kind in ("shell", "python")), None)
            if before is None or out[-1] is not before:
                raise MarkupError(f"{block.where}: an expect block follows no run block")
            before.captured = True
            out.append(Step(block, "expect", block.text, shows=before))
        elif word == "output":
            continue
        elif word == "skip":
            if not rest.strip():
                raise MarkupError(f"{block.where}: say why the block is skipped ('skip: REASON')")
            out.append(Step(block, "skip", block.text, reason=rest.strip()))
        elif word == "server":
            ports = rest.split()
            if kind != "shell" or not ports or not all(p.isdigit() for p in ports):
                raise MarkupError(f"{block.where}: 'server PORT ...' names the ports of a shell block")
            out.append(Step(block, "server", block.text, ports=[int(p) for p in ports]))
        elif word == "python":
            if kind != "python" or rest.strip() not in REQUIREMENTS:
                raise MarkupError(f"{block.where}: 'python CLIENT' names one of {sorted(REQUIREMENTS)}")
            out.append(Step(block, "python", block.text, python=rest.strip()))
        elif word == "instead":
            command = rest.strip()
            if kind != "shell" or not command or not block.text.rstrip().endswith(command):
                raise MarkupError(
                    f"{block.where}: 'instead: COMMAND' needs a shell block that ends with COMMAND"
                )
            out.append(Step(block, "shell", command + "\n"))
        else:
            raise MarkupError(f"{block.where}: unknown doc-test directive '{directive}'")
    return out


@pytest.mark.parametrize("doc", DOCS, ids=doc_name)
def test_the_doc_test_markup_is_understood(doc: Path) -> None:
    steps(doc)


# -- the gluecat commands of every shell block -----------------------------------------------------------


def gluecat_commands(text: str) -> Iterator[list[str]]:
    """The arguments of each ``gluecat`` (or ``.venv/bin/gluecat``) command of a shell text: lines
    joined at backslashes, split at ``|``, ``&&``, ``;`` and ``{``, up to a redirection or ``&``."""
    for line in text.replace("\\\n", " ").splitlines():
        for part in re.split(r"\|\||&&|[|;{]", line):
            try:
                words = shlex.split(part, comments=True)
            except ValueError:  # a quote that another part closes: no gluecat command there
                continue
            if words and words[0] in ("gluecat", ".venv/bin/gluecat"):
                command = []
                for word in words[1:]:
                    if word in ("&", "}") or word.startswith((">", "<", "2>")):
                        break
                    command.append(word)
                yield command


def _shell_blocks() -> Iterator[Block]:
    for doc in DOCS:
        yield from (b for b in blocks(doc) if b.language in SHELL)


def test_every_gluecat_command_in_the_docs_parses() -> None:
    """Those of blocks not run too (skipped ones); an option gluecat does not have fails here, fast."""
    commands = [(block, words) for block in _shell_blocks() for words in gluecat_commands(block.text)]
    assert len(commands) >= 10
    for block, words in commands:
        try:
            build_parser().parse_args(words)
        except SystemExit:
            pytest.fail(f"{block.where}: gluecat {shlex.join(words)} does not parse")


def test_every_doc_serves_on_the_default_port() -> None:
    """`gluecat serve`'s default port and the port every document gives it agree."""
    served = [
        (block, build_parser().parse_args(words))
        for block in _shell_blocks()
        for words in gluecat_commands(block.text)
        if words[:1] == ["serve"]
    ]
    assert len(served) >= 3
    for block, args in served:
        assert args.port == DEFAULT_PORT, f"{block.where}: serve --port {args.port}, not {DEFAULT_PORT}"


# -- running a document ------------------------------------------------------------------------------------

PRELUDE = r"""
set -e
__doc_test_block() { printf '\n[doc-test] %s\n' "$1"; }
__doc_test_wait() {  # the server's pid, its log, its ports: return once each port accepts connections
  local pid=$1 log=$2 port tries
  shift 2
  for port in "$@"; do
    tries=0
    until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
      if ! kill -0 "$pid" 2>/dev/null; then
        echo "[doc-test] the server ended before it listened on port $port; it printed:"; cat "$log"; exit 1
      fi
      tries=$((tries + 1))
      if [ "$tries" -gt 1800 ]; then
        echo "[doc-test] nothing listens on port $port after 180 s; the server printed:"; cat "$log"; exit 1
      fi
      sleep 0.1
    done
  done
}
"""


@dataclass
class Run:
    script: str
    outputs: dict[int, Path]
    """Where each captured step's output goes, by the step's index."""
    logs: dict[int, Path]
    """Each server's output, by the step's index."""


def script(doc_steps: list[Step], folder: Path) -> Run:
    """The bash script that runs the steps in order, with ``folder`` for its scripts and outputs."""
    parts, outputs, logs = [PRELUDE], {}, {}
    for i, step in enumerate(doc_steps):
        if step.kind in ("expect", "skip"):
            continue
        parts.append(f"__doc_test_block {shlex.quote(f'{step.block.where} ({step.kind})')}")
        if step.kind == "python":
            source = folder / f"{step.block.doc.name}-line-{step.block.line}.py"
            source.write_text(step.text)
            python = "python" if step.python == "python" else str(client_environment(step.python))
            command = f"{shlex.quote(python)} {shlex.quote(str(source))}\n"
        else:
            command = step.text
        if step.kind == "server":
            logs[i] = folder / f"server-{i}.log"
            parts.append(f"(\n{command}) > {shlex.quote(str(logs[i]))} 2>&1 &")
            parts.append(f"__doc_test_wait $! {shlex.quote(str(logs[i]))} {' '.join(map(str, step.ports))}")
        elif step.captured:
            outputs[i] = folder / f"output-{i}.txt"
            parts.append(f"{{\n{command}}} > {shlex.quote(str(outputs[i]))}")
            parts.append(f"cat {shlex.quote(str(outputs[i]))}")
        else:
            parts.append(command)
    return Run("\n".join(parts) + "\n", outputs, logs)


def with_free_ports(doc_steps: list[Step]) -> list[Step]:
    """The steps with each server's documented port replaced by a free one, everywhere."""
    ports = {port: free_port() for step in doc_steps for port in step.ports}
    pattern = re.compile(r"\b(" + "|".join(map(str, ports)) + r")\b") if ports else None

    def swap(text: str) -> str:
        return pattern.sub(lambda m: str(ports[int(m[1])]), text) if pattern else text

    for step in doc_steps:
        step.text = swap(step.text)
        step.ports = [ports[p] for p in step.ports]
    return doc_steps


def environment(home: Path) -> dict[str, str]:
    """A new user's environment (see the module's docstring) with the tests' venv activated."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "WR_", "SPARK_", "PYSPARK_"))}
    venv = Path(sys.prefix)
    env.update(
        HOME=str(home),
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        SPARK_LOCAL_IP="127.0.0.1",
    )
    return env


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Ends every process the document started: its shell's process group (servers, their children)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            proc.poll()  # the shell itself, once ended, must be reaped to leave the group
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


def _tail(path: Path, lines: int) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def shows(expected: str, printed: str) -> bool:
    """Whether ``expected``'s lines (blank lines at its ends aside) are lines of ``printed``, together
    and in order (trailing spaces aside)."""
    want = [line.rstrip() for line in expected.strip("\n").splitlines()]
    have = [line.rstrip() for line in printed.splitlines()]
    return any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


def run(doc: Path, tmp_path: Path) -> Path:
    """Runs the document's steps; returns the folder they ran in. Fails the test, saying where, if one
    of them fails."""
    doc_steps = with_free_ports(steps(doc))
    work, home, folder = tmp_path / "work", tmp_path / "home", tmp_path / "doc-test"
    for made in (work, home, folder):
        made.mkdir()
    (work / ".venv").symlink_to(sys.prefix)
    plan = script(doc_steps, folder)
    (folder / "script.sh").write_text(plan.script)
    log = folder / "output.txt"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["bash", str(folder / "script.sh")],
            cwd=work,
            env=environment(home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status: int | None = proc.wait(timeout=DOC_TIMEOUT)
        except subprocess.TimeoutExpired:
            status = None
        finally:
            _stop(proc)
            proc.wait()
    failure = None
    if status != 0:
        failure = f"timed out after {DOC_TIMEOUT} s" if status is None else f"exit status {status}"
    else:
        for step in doc_steps:
            if step.kind == "expect" and step.shows is not None:
                shown = plan.outputs[doc_steps.index(step.shows)].read_text(errors="replace")
                if not shows(step.text, shown):
                    failure = (
                        f"the block at line {step.block.line} is not what the block at line "
                        f"{step.shows.block.line} printed:\n{shown}"
                    )
                    break
    if failure is not None:
        printed = log.read_text(errors="replace")
        marks = re.findall(r"^\[doc-test\] (.*)$", printed, re.MULTILINE)
        last = marks[-1] if marks and status != 0 else ""
        failed = next((s for s in doc_steps if last.startswith(s.block.where)), None)
        report = [f"{doc_name(doc)}: {failure}"]
        if failed is not None:
            report.append(f"in the block at {failed.block.where}:\n{failed.block.text}")
        report.append(f"--- what the document's commands printed (the end) ---\n{_tail(log, 80)}")
        for i, server_log in plan.logs.items():
            report.append(
                f"--- the server of {doc_steps[i].block.where} printed ---\n{_tail(server_log, 30)}"
            )
        pytest.fail("\n".join(report), pytrace=False)
    return work


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCS, ids=doc_name)
def test_the_snippets_of_each_doc_work_as_pasted(doc: Path, tmp_path: Path) -> None:
    work = run(doc, tmp_path)
    if doc.name == "README.md":
        left = sorted(p.name + ("/" if p.is_dir() else "") for p in work.iterdir() if p.name != ".venv")
        assert left, "README's commands made nothing?"
        ignored = subprocess.run(
            ["git", "check-ignore", "--no-index", *left], cwd=ROOT, capture_output=True, text=True
        ).stdout.split()
        assert sorted(ignored) == left, (
            f"README's commands leave files that .gitignore does not ignore: {sorted(set(left) - set(ignored))}"
        )


# -- the mechanism itself, on documents made here ------------------------------------------------------------

SERVER_DOC = """\
# A server, a client, what it prints

```sh
mkdir site && echo 'hello from the site' > site/index.html
export GREETING=hello
```

In a second terminal:

<!-- doc-test: server 8765 -->
```sh
python -m http.server 8765 --bind 127.0.0.1 --directory site
```

```python
import os, urllib.request

print(os.environ["GREETING"], urllib.request.urlopen("http://127.0.0.1:8765/").read().decode())
```

<!-- doc-test: expect -->
```
hello hello from the site
```
"""


@pytest.mark.slow
def test_a_doc_runs_in_order_with_its_server_which_is_stopped_after(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(SERVER_DOC)
    folder = tmp_path / "run"
    folder.mkdir()
    work = run(doc, folder)
    assert (work / "site" / "index.html").exists()
    script_text = (folder / "doc-test" / "script.sh").read_text()
    port = int(re.findall(r"http.server (\d+)", script_text)[0])
    assert port != 8765 and f"127.0.0.1:{port}/" in (folder / "doc-test" / "doc.md-line-15.py").read_text()
    with pytest.raises(OSError):  # stopped with the document
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (("echo 'hello from the site'", "false; echo"), "doc.md line 3:\nmkdir site && false"),
        (('os.environ["GREETING"]', 'os.environ["NOPE"]'), "doc.md line 15:\nimport os"),
        (
            ("hello hello from the site", "hello from another site"),
            "the block at line 22 is not what the block at line 15 printed:\nhello hello from the site",
        ),
        (("--bind 127.0.0.1 --directory", "--bind 127.0.0.1 --no-such-option"), "the server ended before"),
    ],
    ids=["a command fails", "a python block raises", "a line is not printed", "the server does not start"],
)
def test_a_doc_whose_snippet_no_longer_works_fails_saying_where(
    change: tuple[str, str], complaint: str, tmp_path: Path
) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(SERVER_DOC.replace(*change))
    with pytest.raises(pytest.fail.Exception) as failed:
        run(doc, tmp_path)
    assert complaint in str(failed.value)


@pytest.mark.parametrize(
    ("markup", "complaint"),
    [
        ("<!-- doc-test: serve 9443 -->\n```sh\ntrue\n```\n", "unknown doc-test directive 'serve 9443'"),
        ("<!-- doc-test: skip -->\n```sh\ntrue\n```\n", "say why the block is skipped"),
        ("<!-- doc-test: skip: later -->\n```sql\nSELECT 1\n```\n", "on a ```sql block, which is never run"),
        ("<!-- doc-test: expect -->\n```\n1\n```\n", "an expect block follows no run block"),
        ("<!-- doc-test: instead: b -->\n```sh\na\n```\n", "needs a shell block that ends with COMMAND"),
        ("<!-- doc-test: output -->\n\n```sh\ntrue\n```\n", "must be a line of its own right before"),
        ("```sh\ntrue\n", "the block is never closed"),
    ],
)
def test_markup_the_test_cannot_follow_is_refused(markup: str, complaint: str, tmp_path: Path) -> None:
    """A mistyped directive would otherwise run (or silently skip) a block the author meant otherwise."""
    doc = tmp_path / "doc.md"
    doc.write_text(markup)
    with pytest.raises(MarkupError, match=re.escape(complaint)):
        steps(doc)
