"""Every command README.md shows still runs: they are what a newcomer copies first. Each is
checked the way it can be checked here. Offline commands (baselines on the bundled sample or on
`../shared/data`, and the commands that read their runs) run for real, in a temporary folder with
the network shut off; `pip install` lines by the extras `pyproject.toml` defines; the test
command by the markers and plugins it names; a command that needs a model server, an API key,
the Hub or a GPU by its subcommand's `--help`, which must list every option written. A command
none of these handles fails, so no new README command goes unchecked."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core import plugins
from tests.conftest import REPO, shared_data

README = REPO / "README.md"
BLOCK = re.compile(r"^```(?:bash|console|sh)\n(.*?)^```", re.M | re.S)
SHARED = "../shared/data/"
BASELINES = ("random", "constant:", "replay:")
# what asks a model, a server or the Hub, and so cannot run here
REMOTE_OPTIONS = {"--api-base", "--model-list", "--judge", "--judge-api-base", "--extractor", "--extractor-api-base"}
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|\b[A-Z][A-Z_]{2,}\b")  # runs/<run>, PATH, FILE, ...
SHELL = {"|", "||", ";", "&", ">", ">>", "<", "2>"}


@dataclass(frozen=True)
class Command:
    line: int
    argv: tuple[str, ...]

    def __str__(self) -> str:
        return f"README.md:{self.line}: {shlex.join(self.argv)}"


def without_comment(line: str) -> str:
    """The line up to a `#` that begins a word outside quotes, as the shell reads it (a comment
    may hold an apostrophe; `page.html#x` is no comment)."""
    quote = None
    for k, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k]
    return line


def readme_commands(text: str) -> list[Command]:
    """The commands of every ```bash, ```console and ```sh block, in order: continuation lines
    joined, comments dropped, `a && b` as two commands; in a block with `$ ` prompts, only the
    prompted lines are commands (the rest is output)."""
    found = []
    for block in BLOCK.finditer(text):
        first = text.count("\n", 0, block.start(1)) + 1
        lines = block.group(1).splitlines()
        prompted = any(line.startswith("$ ") for line in lines)
        i = 0
        while i < len(lines):
            start, line = first + i, lines[i]
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            i += 1
            if prompted:
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            part: list[str] = []
            for token in shlex.split(without_comment(line)) + ["&&"]:
                if token == "&&":
                    if part:
                        found.append(Command(start, tuple(part)))
                    part = []
                else:
                    part.append(token)
    return found


def option_value(argv, *names: str) -> str | None:
    for k, token in enumerate(argv):
        for name in names:
            if token == name and k + 1 < len(argv):
                return argv[k + 1]
            if token.startswith(name + "="):
                return token.split("=", 1)[1]
    return None


def classify(argv) -> str:
    """`offline`, `remote`, `pip` or `pytest`; `unhandled: why` for anything else."""
    argv = list(argv)
    if SHELL & set(argv):
        return f"unhandled: shell syntax {sorted(SHELL & set(argv))}"
    if argv[0] == "pip" or argv[:3] == ["python", "-m", "pip"]:
        return "pip"
    if argv[:3] == ["python", "-m", "pytest"]:
        return "pytest"
    if argv[0] != "medvqa":
        return f"unhandled: {argv[0]!r} is not medvqa, pip or pytest"
    model = option_value(argv, "--model", "-m")
    sub = argv[1] if len(argv) > 1 else ""
    remote = (
        sub == "judge"
        or bool(REMOTE_OPTIONS & {t.split("=", 1)[0] for t in argv})
        or (model is not None and not model.startswith(BASELINES))
        or any(t.startswith("api_base=") for t in argv)
        or (sub == "run" and not {"--data", "--sample"} & {t.split("=", 1)[0] for t in argv})
    )
    if remote:
        return "remote"
    if PLACEHOLDER.search(" ".join(argv[1:])):
        return (
            f"unhandled: an offline command with a placeholder ({PLACEHOLDER.search(' '.join(argv[1:]))[0]}) cannot run"
        )
    return "offline"


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


def of_kind(kind: str) -> list[Command]:
    return [c for c in COMMANDS if classify(c.argv) == kind]


def test_every_readme_command_is_checked_one_way_or_another():
    assert len(COMMANDS) >= 15, [str(c) for c in COMMANDS]
    unhandled = [f"{c}  ({classify(c.argv)})" for c in COMMANDS if classify(c.argv).startswith("unhandled")]
    assert not unhandled, "README commands no check handles:\n" + "\n".join(unhandled)
    kinds = {classify(c.argv) for c in COMMANDS}
    assert kinds == {"offline", "remote", "pip", "pytest"}
    # the front door: one line installs and runs the bundled sample offline
    first = COMMANDS[0]
    assert classify(first.argv) == "pip" and classify(COMMANDS[1].argv) == "offline"
    assert COMMANDS[1].line == first.line and "--sample" in COMMANDS[1].argv


def test_the_reader_and_the_classifier_handle_what_a_readme_may_hold():
    text = (
        "```bash\npip install -e '.[dev]' && medvqa run jmed48k --sample --model random  # offline\n"
        "medvqa extract jmed48k --questions 77AM.pdf \\\n    --year 2025 --out release/\n```\n"
        "```console\n$ medvqa list\nBenchmarks:\n  jmed48k\n```\n"
        "```sh\nmedvqa view runs/a --html v.html#x  # the browser's page\n```\n"
    )
    assert [(c.line, c.argv) for c in readme_commands(text)] == [
        (2, ("pip", "install", "-e", ".[dev]")),
        (2, ("medvqa", "run", "jmed48k", "--sample", "--model", "random")),
        (3, ("medvqa", "extract", "jmed48k", "--questions", "77AM.pdf", "--year", "2025", "--out", "release/")),
        (7, ("medvqa", "list")),
        (12, ("medvqa", "view", "runs/a", "--html", "v.html#x")),
    ]
    assert classify(["medvqa", "run", "jmed48k", "--data", "x", "--model", "openai/gpt-5"]) == "remote"
    assert classify(["medvqa", "run", "jmed48k", "--model", "random"]) == "remote"  # the Hub
    assert classify(["medvqa", "score", "r", "--extractor", "openai/gpt-5"]) == "remote"
    assert classify(["medvqa", "report", "runs/<run>"]).startswith("unhandled: an offline command with a placeholder")
    assert classify(["medvqa", "validate", "jmed48k", "--data", "PATH"]).startswith("unhandled")
    assert classify(["curl", "-O", "https://example.org/x"]).startswith("unhandled")
    assert classify(["medvqa", "list", "|", "head"]).startswith("unhandled: shell syntax")


def test_the_test_command_is_the_one_ci_runs_and_names_what_exists():
    text = README.read_text(encoding="utf-8")
    # .ci/run evaluates the line two lines after the marker: it must stay the whole suite (no -m),
    # on both cores (-n 2: serially it took 12 min 47 s on CI, too close to its 15)
    after = text.split("<!-- test-command -->\n", 1)[1].splitlines()
    assert after[:3] == ["```bash", "python -m pytest -q -n 2", "```"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    markers = {m.split(":")[0] for m in project["tool"]["pytest"]["ini_options"]["markers"]}
    dev = " ".join(project["project"]["optional-dependencies"]["dev"])
    fast = shlex.split(re.search(r'`(python -m pytest -q -m "not slow" -n 2)`', text)[1])
    checked = of_kind("pytest") + [Command(0, tuple(fast))]
    for command in checked:
        args = list(command.argv[3:])
        while args:
            flag = args.pop(0)
            if flag == "-q":
                continue
            if flag == "-m":
                names = set(re.findall(r"\w+", args.pop(0))) - {"and", "or", "not"}
                assert names <= markers, f"{command}: no marker {names - markers} in pyproject.toml"
            elif flag == "-n":
                assert int(args.pop(0)) >= 1 and "pytest-xdist" in dev, f"{command}: -n needs pytest-xdist in [dev]"
            else:
                pytest.fail(f"{command}: the README test command takes {flag}, which this test does not check")


def test_pip_lines_install_this_project_with_extras_it_defines():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    lines = of_kind("pip")
    assert lines
    for command in lines:
        argv = list(command.argv)
        argv = argv[argv.index("install") + 1 :]
        requirements = [a for a in argv if a not in ("-e", "--editable", "-q", "--quiet")]
        assert all(not a.startswith("-") for a in requirements), f"{command}: an option this test does not check"
        for requirement in requirements:
            m = re.fullmatch(r"(?P<target>[^\[\]]+)(?:\[(?P<extras>[^\]]*)\])?", requirement)
            assert m, f"{command}: {requirement!r} is not a requirement this test reads"
            target = m["target"]
            if target.startswith("."):
                assert (REPO / target / "pyproject.toml").is_file(), f"{command}: {target} is not the repository root"
                assert "-e" in argv or "--editable" in argv, f"{command}: the checkout installs editable"
            else:
                assert target == project["name"], f"{command}: installs {target}, not {project['name']}"
            named = {e.strip() for e in (m["extras"] or "").split(",") if e.strip()}
            assert named <= extras, f"{command}: no extra {named - extras} in pyproject.toml ({sorted(extras)})"


def subcommand(argv) -> tuple[list[str], click.Command]:
    """The command path (`run`, `import jmed48k`, `extract jmed48k`) and its click command."""
    ctx = click.Context(cli)
    path, command = [], cli
    for token in argv[1:]:
        if not isinstance(command, click.Group) or token.startswith("-"):
            break
        found = command.get_command(ctx, token)
        assert found is not None, f"medvqa has no command {' '.join([*path, token])}"
        path.append(token)
        command = found
    return path, command


@pytest.mark.parametrize("command", of_kind("remote"), ids=str)
def test_remote_commands_exist_and_take_every_option_written(command):
    path, click_command = subcommand(command.argv)
    assert path and not isinstance(click_command, click.Group), f"{command}: no command to run"
    shown = CliRunner().invoke(cli, [*path, "--help"])
    assert shown.exit_code == 0, shown.output
    options = {name for p in click_command.params if isinstance(p, click.Option) for name in p.opts + p.secondary_opts}
    for token in command.argv[1 + len(path) :]:
        if token.startswith("-") and not re.fullmatch(r"-\d.*", token):
            name = token.split("=", 1)[0]
            assert name in options and re.search(rf"(^|[\s,/]){re.escape(name)}\b", shown.output, re.M), (
                f"{command}: `medvqa {' '.join(path)}` has no option {name}"
            )
    if path[0] in ("run", "validate"):
        assert command.argv[2] in plugins.benchmarks(), f"{command}: no benchmark {command.argv[2]}"


def with_shared_data(argv) -> list[str]:
    """`../shared/data/X` (from the repository root, as README writes it) → the real folder."""
    out = []
    for token in argv:
        head, sep, value = token.rpartition("=") if "=" in token and token.startswith("-") else ("", "", token)
        if value.startswith(SHARED):
            value = str(shared_data(*value[len(SHARED) :].strip("/").split("/")))
        out.append(head + sep + value)
    return out


@pytest.mark.slow  # a dozen medvqa processes, two HTML pages and 2,000 IgakuQA items: about 35 s here
def test_the_offline_readme_commands_run_for_real_in_order(tmp_path):
    commands = of_kind("offline")
    assert len(commands) >= 10
    # no network: the Hub offline, every HTTP(S) connection to a closed port
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        http_proxy="http://127.0.0.1:9",
        https_proxy="http://127.0.0.1:9",
        NO_PROXY="",
        no_proxy="",
    )
    for command in commands:
        argv = with_shared_data(command.argv)
        out = subprocess.run(
            [sys.executable, "-m", "medvqa.cli", *argv[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert out.returncode == 0, f"{command}\nexit {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
        assert (out.stdout + out.stderr).strip(), f"{command} printed nothing"
        for option in ("--run-dir", "--html", "--out"):
            written = option_value(argv, option)
            if written is not None:
                assert (tmp_path / written).exists(), f"{command} did not write {written}"


WRITES = ("--run-dir", "--html", "--out", "--figures", "--figure")


def test_what_the_readme_commands_write_stays_in_an_ignored_folder():
    """A newcomer runs the tour in the checkout: every run directory and page it writes lands in
    a folder .gitignore ignores (runs/), never loose in the checkout (audit.html, view.html)."""
    ignored = {
        line.strip().rstrip("/")
        for line in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
        if line.strip().endswith("/") and "*" not in line
    }
    written = [(c, value) for c in COMMANDS for option in WRITES if (value := option_value(c.argv, option))]
    assert len(written) >= 5, written  # a run without --run-dir writes under runs/ (its default)
    loose = [
        f"{c}: {value}" for c, value in written if not value.startswith("../") and Path(value).parts[0] not in ignored
    ]
    assert not loose, (
        "README commands write outside the ignored folders (" + ", ".join(sorted(ignored)) + "):\n" + "\n".join(loose)
    )


FENCED = re.compile(r"^```.*?^```", re.M | re.S)


def anchors(path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped,
    spaces as hyphens."""
    text = FENCED.sub("", path.read_text(encoding="utf-8"))
    return {
        re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#{1,6} (.+)$", text, re.M)
    }


def test_every_link_of_the_readme_and_the_docs_reaches_a_file_and_a_heading():
    """The reference moved from README.md into docs/: a link to a README section that is gone,
    or to a page renamed, is caught here."""
    pages = [README, *sorted((REPO / "docs").rglob("*.md"))]
    broken, seen = [], 0
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", FENCED.sub("", page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue
            seen += 1
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert seen > 50 and not broken, "\n".join(broken)
