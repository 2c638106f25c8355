from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tpucheck.config.file import (
    KNOWN_KEYS,
    Config,
    ConfigProblem,
    find_config,
    load_config,
)
from tpucheck.config.init_template import ConfigExists, InitError, init_config_text, write_init
from tpucheck.ruleset import load_ruleset, select_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

FORMATS = ("terminal", "json", "markdown")


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory, so problems name files as the user would type them."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def load_own(directory: Path, text: str) -> Config:
    write(directory / "tpucheck.toml", text)
    return load_config(directory, formats=FORMATS)


def messages(config: Config) -> list[str]:
    return [str(problem) for problem in config.problems]


# --------------------------------------------------------------------------- finding


def test_found_by_walking_up_from_a_directory_or_a_file(tmp_path: Path) -> None:
    config = write(tmp_path / "tpucheck.toml", "jobs = 2\n")
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    module = write(tmp_path / "a" / "b" / "mod.py", "")
    assert find_config(tmp_path / "a" / "b" / "c") == config
    assert find_config(module) == config
    assert find_config(tmp_path) == config
    assert load_config(tmp_path / "a" / "b" / "c").jobs == 2


def test_dot_dot_in_the_start_path_is_taken_as_written(tmp_path: Path) -> None:
    config = write(tmp_path / "x" / "tpucheck.toml", "jobs = 2\n")
    (tmp_path / "x" / "sub").mkdir()
    assert find_config(tmp_path / "x" / "sub" / "..") == config


def test_tpucheck_toml_beats_pyproject_in_the_same_directory(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.tpucheck]\njobs = 1\n")
    own = write(tmp_path / "tpucheck.toml", "jobs = 3\n")
    assert find_config(tmp_path) == own
    assert load_config(tmp_path).jobs == 3


def test_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    outer = write(tmp_path / "tpucheck.toml", "jobs = 4\n")
    write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "pkg"\n\n[tool.ruff]\nline-length = 100\n')
    assert find_config(tmp_path / "pkg") == outer


def test_the_nearest_config_wins(tmp_path: Path) -> None:
    write(tmp_path / "tpucheck.toml", "jobs = 4\n")
    inner = write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "pkg"\n\n[tool.tpucheck]\njobs = 1\n')
    assert find_config(tmp_path / "pkg" / "src") == inner
    assert load_config(tmp_path / "pkg").jobs == 1


def test_dotted_tool_tpucheck_keys_count_as_the_table(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n[tool]\ntpucheck.jobs = 2\n')
    assert find_config(tmp_path) == pyproject
    assert load_config(tmp_path).jobs == 2


def test_no_config_gives_the_defaults(tmp_path: Path) -> None:
    assert find_config(tmp_path) is None
    assert load_config(tmp_path) == Config()
    assert Config().root is None


def test_an_unparsable_pyproject_counts_only_when_it_shows_the_table(here: Path) -> None:
    write(here / "pyproject.toml", '[project\nname = "x"\n')
    assert find_config(here) is None
    write(here / "pyproject.toml", '[project]\nname = "x\n\n[tool.tpucheck]\njobs = 2\n')
    config = load_config(here)
    assert config.path == here / "pyproject.toml"
    assert [(p.file, p.line, p.key) for p in config.problems] == [("pyproject.toml", 2, "")]
    assert messages(config)[0].startswith("pyproject.toml:2: invalid TOML: ")
    assert config.jobs is None


# --------------------------------------------------------------------------- every key


ALL_KEYS = """\
select = ["CA", "custom-kernel"]
ignore = ["CA007"]
exclude = ["third_party/", "!third_party/keep.py"]
extend-rules = ["my-rules/*.yaml"]
fail-under = 80
fail-on = "major"
format = "json"
jobs = 4
baseline = "ci/baseline.json"
max-file-size = 1000
file-time-budget = 2.5
cache-dir = ".cache/tpucheck"
cache = false
respect-gitignore = true

[per-file-ignores]
"tests/**" = ["host-sync", "CA001"]
"*.ipynb" = ["precision"]
"""


def expected_all_keys(root: Path, config_file: Path) -> Config:
    return Config(
        path=config_file,
        select=("CA", "custom-kernel"),
        ignore=("CA007",),
        per_file_ignores=(("tests/**", ("host-sync", "CA001")), ("*.ipynb", ("precision",))),
        exclude=("third_party/", "!third_party/keep.py"),
        extend_rules=(root / "my-rules" / "a.yaml",),
        fail_under=80.0,
        fail_on="major",
        format="json",
        jobs=4,
        baseline=root / "ci" / "baseline.json",
        max_file_size=1000,
        file_time_budget=2.5,
        cache_dir=root / ".cache" / "tpucheck",
        cache=False,
        respect_gitignore=True,
    )


def test_every_key_parsed_from_tpucheck_toml(tmp_path: Path) -> None:
    write(tmp_path / "my-rules" / "a.yaml", "rules: []\n")
    config = load_own(tmp_path, ALL_KEYS)
    assert config == expected_all_keys(tmp_path, tmp_path / "tpucheck.toml")
    assert config.root == tmp_path
    assert isinstance(config.fail_under, float)


def test_every_key_parsed_from_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "my-rules" / "a.yaml", "rules: []\n")
    body = ALL_KEYS.replace("[per-file-ignores]", "[tool.tpucheck.per-file-ignores]")
    write(tmp_path / "pyproject.toml", f'[project]\nname = "x"\n\n[tool.tpucheck]\n{body}')
    assert load_config(tmp_path, formats=FORMATS) == expected_all_keys(tmp_path, tmp_path / "pyproject.toml")


def test_format_is_checked_against_the_report_formats_by_default(tmp_path: Path) -> None:
    from tpucheck.report import FORMATS as REPORT_FORMATS

    write(tmp_path / "tpucheck.toml", 'format = "sarif"\n')
    assert load_config(tmp_path).format == "sarif"
    write(tmp_path / "tpucheck.toml", 'format = "pdf"\n')
    assert load_config(tmp_path).problems[0].message == f'expected one of {", ".join(REPORT_FORMATS)}, got "pdf"'


# --------------------------------------------------------------------------- wrong values


WRONG = [
    ("fail-under", '"80"', 'expected a number from 0 to 100, got "80"'),
    ("fail-under", "100.5", "expected a number from 0 to 100, got 100.5"),
    ("fail-under", "-1", "expected a number from 0 to 100, got -1"),
    ("fail-under", "true", "expected a number from 0 to 100, got true"),
    ("fail-under", "nan", "expected a number from 0 to 100, got nan"),
    ("fail-on", '"critical"', 'expected one of blocker, major, minor, info, got "critical"'),
    ("fail-on", '"blockers"', 'expected one of blocker, major, minor, info, got "blockers"; did you mean blocker?'),
    ("fail-on", "1", "expected one of blocker, major, minor, info, got 1"),
    ("format", '"jsn"', 'expected one of terminal, json, markdown, got "jsn"; did you mean json?'),
    ("jobs", "0", "expected a whole number of worker processes, at least 1, got 0"),
    ("jobs", "true", "expected a whole number of worker processes, at least 1, got true"),
    ("jobs", "2.0", "expected a whole number of worker processes, at least 1, got 2.0"),
    ("jobs", '"4"', 'expected a whole number of worker processes, at least 1, got "4"'),
    ("max-file-size", "false", "expected a whole number of bytes, at least 1, got false"),
    ("max-file-size", "0", "expected a whole number of bytes, at least 1, got 0"),
    ("file-time-budget", "0", "expected a number of seconds greater than 0, got 0"),
    ("file-time-budget", "true", "expected a number of seconds greater than 0, got true"),
    ("file-time-budget", "inf", "expected a number of seconds greater than 0, got inf"),
    ("file-time-budget", '"30"', 'expected a number of seconds greater than 0, got "30"'),
    ("cache", '"yes"', 'expected true or false, got "yes"'),
    ("cache", "1", "expected true or false, got 1"),
    ("respect-gitignore", "0", "expected true or false, got 0"),
    ("select", '"CA001"', 'expected a list of rule ids, id prefixes, names or categories, got "CA001"'),
    ("select", '["CA001", 3]', 'expected a list of rule ids, id prefixes, names or categories, got ["CA001", 3]'),
    ("ignore", '[" "]', 'expected a list of rule ids, id prefixes, names or categories, got [" "]'),
    ("exclude", '"build/"', 'expected a list of strings, got "build/"'),
    ("exclude", '[["build/"]]', 'expected a list of strings, got [["build/"]]'),
    ("extend-rules", '"rules"', 'expected a list of strings, got "rules"'),
    ("baseline", "3", "expected a path (a non-empty string), got 3"),
    ("baseline", '""', 'expected a path (a non-empty string), got ""'),
    ("cache-dir", "false", "expected a path (a non-empty string), got false"),
    ("per-file-ignores", '["tests/**"]', 'expected a table of glob = [rules] (e.g. "tests/**" = ["host-sync"]), got ["tests/**"]'),
]

ATTRIBUTE = {key: key.replace("-", "_") for key in KNOWN_KEYS}


@pytest.mark.parametrize(("key", "value", "message"), WRONG)
def test_a_wrong_value_is_one_problem_naming_the_key_and_line_and_is_dropped(here: Path, key: str, value: str, message: str) -> None:
    other = "jobs = 2" if key != "jobs" else 'fail-on = "major"'
    config = load_own(here, f"# a comment\n{other}\n{key} = {value}\n")
    assert config.problems == (ConfigProblem("tpucheck.toml", 3, key, message),)
    assert str(config.problems[0]) == f"tpucheck.toml:3: {key}: {message}"
    assert (config.jobs, config.fail_on) != (None, None)
    assert getattr(config, ATTRIBUTE[key]) == getattr(Config(), ATTRIBUTE[key])


def test_a_bool_is_not_a_number(tmp_path: Path) -> None:
    config = load_own(tmp_path, "jobs = true\nmax-file-size = false\nfail-under = true\nfile-time-budget = true\n")
    assert [(p.key, p.line) for p in config.problems] == [("jobs", 1), ("max-file-size", 2), ("fail-under", 3), ("file-time-budget", 4)]
    assert (config.jobs, config.max_file_size, config.fail_under, config.file_time_budget) == (None, None, None, None)


def test_problems_in_pyproject_name_the_table_and_find_the_line_past_decoys(here: Path) -> None:
    write(
        here / "pyproject.toml",
        '[project]\n'
        'description = """\n'
        'fail-under = 3\n'
        '[tool.tpucheck]\n'
        '"""\n'
        '[tool.other]\n'
        'x = [\n'
        '  "jobs = 1",\n'
        '  [1], # [tool.tpucheck]\n'
        ']\n'
        '\n'
        '[tool.tpucheck]  # ours\n'
        '# fail-under = 1\n'
        'jobs = 0\n'
        '"fail-on" = "nope"\n'
        "fail-under = '80'\n",
    )
    config = load_config(here)
    assert messages(config) == [
        "pyproject.toml:14: [tool.tpucheck] jobs: expected a whole number of worker processes, at least 1, got 0",
        'pyproject.toml:15: [tool.tpucheck] fail-on: expected one of blocker, major, minor, info, got "nope"',
        'pyproject.toml:16: [tool.tpucheck] fail-under: expected a number from 0 to 100, got "80"',
    ]


def test_tool_tpucheck_that_is_not_a_table(here: Path) -> None:
    write(here / "pyproject.toml", '[project]\nname = "x"\n[tool]\ntpucheck = 3\n')
    assert messages(load_config(here)) == ["pyproject.toml:4: [tool.tpucheck] must be a table, got 3"]


# --------------------------------------------------------------------------- unknown keys


def test_an_unknown_key_suggests_the_closest_known_one(here: Path) -> None:
    config = load_own(here, 'fail-on = "major"\nfail-undr = 80\nfail_under = 70\n')
    assert messages(config) == [
        "tpucheck.toml:2: fail-undr: unknown key; did you mean fail-under?",
        "tpucheck.toml:3: fail_under: unknown key; did you mean fail-under?",
    ]
    assert config.fail_on == "major" and config.fail_under is None


def test_an_unknown_key_with_nothing_close_lists_the_known_keys(here: Path) -> None:
    write(here / "pyproject.toml", "[tool.tpucheck]\ncolour = true\n")
    assert messages(load_config(here)) == [f"pyproject.toml:2: [tool.tpucheck] colour: unknown key; known keys are {', '.join(KNOWN_KEYS)}"]


def test_a_tool_table_in_tpucheck_toml_is_explained(here: Path) -> None:
    config = load_own(here, "[tool.tpucheck]\njobs = 2\n")
    assert messages(config) == ["tpucheck.toml:1: tool: unknown key: this file takes its settings as top-level keys, without a [tool.tpucheck] header"]


# --------------------------------------------------------------------------- unreadable


def test_a_toml_syntax_error_is_one_line_with_its_line(here: Path) -> None:
    config = load_own(here, 'fail-on = "major"\n\njobs = = 3\n')
    assert messages(config) == ["tpucheck.toml:3: invalid TOML: Invalid value (column 8)"]
    assert config.path == here / "tpucheck.toml" and config.fail_on is None


def test_an_unterminated_value_points_at_the_last_line(here: Path) -> None:
    config = load_own(here, 'jobs = 2\nselect = ["CA001",\n')
    [problem] = messages(config)
    assert problem.startswith("tpucheck.toml:2: invalid TOML: ") and problem.endswith(" at the end of the file")
    assert "\n" not in problem


def test_text_that_is_not_utf8_is_a_problem(here: Path) -> None:
    write(here / "tpucheck.toml", b"jobs = 2\n# caf\xe9\n")
    assert messages(load_config(here)) == ["tpucheck.toml: cannot read: not UTF-8 text (byte 0xe9 at offset 14)"]


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    write(tmp_path / "tpucheck.toml", b"\xef\xbb\xbfjobs = 2\n")
    assert load_config(tmp_path).jobs == 2


# --------------------------------------------------------------------------- explicit


def test_an_explicit_file_is_read_as_top_level_keys_and_relative_to_itself(here: Path) -> None:
    write(here / "tpucheck.toml", "jobs = 1\n")
    explicit = write(here / "ci" / "strict.toml", 'fail-under = 90\nbaseline = "base.json"\n')
    config = load_config(here, explicit=Path("ci/strict.toml"))
    assert (config.path, config.fail_under, config.jobs, config.baseline) == (explicit, 90.0, None, here / "ci" / "base.json")


def test_an_explicit_pyproject_is_read_as_the_table(here: Path) -> None:
    explicit = write(here / "elsewhere" / "pyproject.toml", '[tool.tpucheck]\nfail-on = "minor"\n')
    assert load_config(explicit=explicit).fail_on == "minor"
    write(explicit, '[project]\nname = "x"\n')
    assert messages(load_config(explicit=explicit)) == ["elsewhere/pyproject.toml: no [tool.tpucheck] table"]


def test_a_missing_or_unreadable_explicit_file_is_a_problem(here: Path) -> None:
    assert messages(load_config(explicit=Path("missing.toml"))) == ["missing.toml: no such config file"]
    (here / "folder.toml").mkdir()
    [problem] = messages(load_config(explicit=Path("folder.toml")))
    assert problem.startswith("folder.toml: cannot read: ")


# --------------------------------------------------------------------------- paths


def test_relative_paths_are_resolved_against_the_config_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    config = load_own(project, 'baseline = "../shared/./base.json"\ncache-dir = "~/cache"\n')
    assert config.baseline == tmp_path / "shared" / "base.json"
    assert config.cache_dir == tmp_path / "home" / "cache"
    absolute = tmp_path / "abs" / "base.json"
    assert load_own(project, f'baseline = "{absolute.as_posix()}"\n').baseline == absolute


def test_extend_rules_globs_expand_sorted_with_recursion_and_duplicates_dropped(tmp_path: Path) -> None:
    for name in ("rules/z.yaml", "rules/a.yaml", "rules/m.yml", "rules/notes.md", "rules/sub/deep/c.yaml", "team/t.yaml", "one.yaml"):
        write(tmp_path / name, "rules: []\n")
    config = load_own(tmp_path, 'extend-rules = ["rules/*.yaml", "rules/**", "team", "team/*.yaml", "one.yaml", "rules/a.yaml"]\n')
    assert config.problems == ()
    rel = [path.relative_to(tmp_path).as_posix() for path in config.extend_rules]
    assert rel == ["rules/a.yaml", "rules/z.yaml", "rules/m.yml", "rules/sub/deep/c.yaml", "team", "one.yaml"]


def test_extend_rules_entries_that_find_nothing_are_problems_at_their_line(here: Path) -> None:
    write(here / "rules" / "notes.md", "")
    write(here / "good.yaml", "rules: []\n")
    config = load_own(here, 'extend-rules = [\n  "rules/*",\n  "good.yaml",\n  "missing.yaml",\n]\n')
    assert messages(config) == [
        f'tpucheck.toml:2: extend-rules: "rules/*" matches no .yaml or .yml file (looked in {here})',
        f'tpucheck.toml:4: extend-rules: "missing.yaml": no such file or directory ({here / "missing.yaml"})',
    ]
    assert config.extend_rules == (here / "good.yaml",)


def test_bad_exclude_patterns_are_dropped_alone(here: Path) -> None:
    config = load_own(here, 'exclude = [\n  "build/",\n  "[z-a]",\n  "!",\n]\n')
    assert config.exclude == ("build/",)
    assert messages(config) == [
        'tpucheck.toml:3: exclude: "[z-a]": not a valid gitignore pattern (bad character range z-a)',
        "tpucheck.toml:4: exclude: \"!\": not a valid gitignore pattern (Invalid git pattern: '!')",
    ]


# --------------------------------------------------------------------------- per-file-ignores


def test_per_file_ignores_in_every_toml_spelling(tmp_path: Path) -> None:
    expected = (("tests/**", ("host-sync",)), ("docs/", ("CA001", "CA002")))
    assert load_own(tmp_path, 'per-file-ignores = { "tests/**" = ["host-sync"], "docs/" = ["CA001", "CA002"] }\n').per_file_ignores == expected
    assert load_own(tmp_path, 'per-file-ignores."tests/**" = ["host-sync"]\nper-file-ignores."docs/" = ["CA001", "CA002"]\n').per_file_ignores == expected
    assert load_own(tmp_path, '[per-file-ignores]\n"tests/**" = ["host-sync"]\n\'docs/\' = [" CA001", "CA002", "CA001"]\n').per_file_ignores == expected


def test_a_bad_per_file_ignores_entry_is_dropped_alone_at_its_line(here: Path) -> None:
    write(
        here / "pyproject.toml",
        '[tool.tpucheck]\njobs = 2\n\n[tool.tpucheck.per-file-ignores]\n"tests/**" = ["host-sync"]\n"docs/" = "CA001"\n"!src/**" = ["CA001"]\n"# no" = ["CA001"]\n',
    )
    config = load_config(here)
    assert config.per_file_ignores == (("tests/**", ("host-sync",)),)
    assert messages(config) == [
        'pyproject.toml:6: [tool.tpucheck] per-file-ignores."docs/": expected a list of rule ids, id prefixes, names or categories, got "CA001"',
        'pyproject.toml:7: [tool.tpucheck] per-file-ignores."!src/**": a negated pattern cannot select files here',
        'pyproject.toml:8: [tool.tpucheck] per-file-ignores."# no": not a pattern (blank, a # comment or unfinished)',
    ]


def test_unknown_rule_refs_are_dropped_and_reported_once_the_rules_are_known(here: Path) -> None:
    config = load_own(
        here,
        'select = [\n  "CA001",\n  "CA999",\n]\nignore = ["nope"]\n\n[per-file-ignores]\n"tests/**" = ["host-sync", "hots-sync"]\n"docs/" = ["zzz"]\n',
    )
    checked = config.without_unknown_rule_refs(lambda ref: ref in {"CA001", "host-sync"})
    assert (checked.select, checked.ignore, checked.per_file_ignores) == (("CA001",), (), (("tests/**", ("host-sync",)),))
    assert messages(checked) == [
        'tpucheck.toml:3: select: unknown rule "CA999": not a rule id, id prefix, name or category',
        'tpucheck.toml:5: ignore: unknown rule "nope": not a rule id, id prefix, name or category',
        'tpucheck.toml:8: per-file-ignores."tests/**": unknown rule "hots-sync": not a rule id, id prefix, name or category',
        'tpucheck.toml:9: per-file-ignores."docs/": unknown rule "zzz": not a rule id, id prefix, name or category',
    ]
    assert load_own(here, 'select = ["CA999"]\n').without_unknown_rule_refs(lambda ref: False).select is None
    assert load_own(here, "select = []\n").without_unknown_rule_refs(lambda ref: False).select == ()


def test_problem_lines_without_a_line_or_a_key() -> None:
    assert str(ConfigProblem("pyproject.toml", None, "jobs", "bad")) == "pyproject.toml: [tool.tpucheck] jobs: bad"
    assert str(ConfigProblem("a/pyproject.toml", 3, "", "invalid TOML: x")) == "a/pyproject.toml:3: invalid TOML: x"
    assert str(ConfigProblem("ci.toml", 2, "jobs", "bad")) == "ci.toml:2: jobs: bad"


# --------------------------------------------------------------------------- init


def test_init_writes_tpucheck_toml_that_loads_cleanly_with_the_blocker_gate(tmp_path: Path) -> None:
    written = write_init(tmp_path)
    assert written == tmp_path / "tpucheck.toml"
    assert written.read_text(encoding="utf-8") == init_config_text()
    config = load_config(tmp_path)
    assert config.problems == ()
    assert config == Config(path=written, fail_on="blocker")


def test_init_refuses_an_existing_tpucheck_toml_unless_forced(tmp_path: Path) -> None:
    write(tmp_path / "tpucheck.toml", "jobs = 2\n")
    with pytest.raises(ConfigExists, match=r"tpucheck\.toml already exists \(--force overwrites it\)"):
        write_init(tmp_path)
    assert (tmp_path / "tpucheck.toml").read_text() == "jobs = 2\n"
    assert write_init(tmp_path, force=True).read_text(encoding="utf-8") == init_config_text()


@pytest.mark.parametrize(
    ("original", "separator"),
    [
        (b'[project]\nname = "x"\n', b"\n"),
        (b'[project]\nname = "x"', b"\n\n"),
        (b'[project]\nname = "x"\n\n', b""),
        (b'[project]\r\nname = "x"\r\n', b"\r\n"),
        (b"", b""),
    ],
)
def test_init_appends_to_a_pyproject_byte_for_byte(tmp_path: Path, original: bytes, separator: bytes) -> None:
    write(tmp_path / "pyproject.toml", original)
    assert write_init(tmp_path) == tmp_path / "pyproject.toml"
    newline = b"\r\n" if b"\r\n" in original else b"\n"
    section = init_config_text(pyproject=True).encode().replace(b"\n", newline)
    assert (tmp_path / "pyproject.toml").read_bytes() == original + separator + section
    assert not (tmp_path / "tpucheck.toml").exists()
    config = load_config(tmp_path)
    assert (config.problems, config.fail_on, config.path) == ((), "blocker", tmp_path / "pyproject.toml")


@pytest.mark.parametrize("force", [False, True])
def test_init_never_touches_a_pyproject_that_has_the_table(tmp_path: Path, force: bool) -> None:
    original = b'[project]\nname = "x"\n\n[tool.tpucheck]\njobs = 2\n'
    write(tmp_path / "pyproject.toml", original)
    with pytest.raises(ConfigExists, match=r"pyproject\.toml already has a \[tool\.tpucheck\] table"):
        write_init(tmp_path, force=force)
    with pytest.raises(ConfigExists):
        write_init(tmp_path, pyproject=True, force=force)
    assert (tmp_path / "pyproject.toml").read_bytes() == original
    assert not (tmp_path / "tpucheck.toml").exists()


def test_init_will_not_shadow_a_pyproject_table_with_a_new_tpucheck_toml_unless_forced(tmp_path: Path) -> None:
    original = b"[tool.tpucheck]\njobs = 2\n"
    write(tmp_path / "pyproject.toml", original)
    with pytest.raises(ConfigExists, match="would override"):
        write_init(tmp_path, pyproject=False)
    assert write_init(tmp_path, pyproject=False, force=True) == tmp_path / "tpucheck.toml"
    assert (tmp_path / "pyproject.toml").read_bytes() == original


def test_init_beside_an_existing_tpucheck_toml_does_not_append_to_pyproject(tmp_path: Path) -> None:
    original = b'[project]\nname = "x"\n'
    write(tmp_path / "pyproject.toml", original)
    write(tmp_path / "tpucheck.toml", "jobs = 2\n")
    with pytest.raises(ConfigExists, match="already exists"):
        write_init(tmp_path)
    with pytest.raises(ConfigExists, match="would take precedence"):
        write_init(tmp_path, pyproject=True, force=True)
    assert write_init(tmp_path, force=True) == tmp_path / "tpucheck.toml"
    assert (tmp_path / "pyproject.toml").read_bytes() == original


def test_init_can_start_a_pyproject(tmp_path: Path) -> None:
    assert write_init(tmp_path, pyproject=True) == tmp_path / "pyproject.toml"
    assert (tmp_path / "pyproject.toml").read_text(encoding="utf-8") == init_config_text(pyproject=True)


@pytest.mark.parametrize("original", [b'[project\nname = "x"\n', b"tool = { black = {} }\n", b"name = '\xff'\n"])
def test_init_refuses_a_pyproject_it_cannot_extend(tmp_path: Path, original: bytes) -> None:
    write(tmp_path / "pyproject.toml", original)
    with pytest.raises(InitError) as raised:
        write_init(tmp_path)
    assert not isinstance(raised.value, ConfigExists)
    assert "\n" not in str(raised.value)
    assert (tmp_path / "pyproject.toml").read_bytes() == original


EXAMPLE = re.compile(r'^# ((?:[a-z][a-z-]*|"[^"]*") = .*|\[[a-z.-]+\])$')


def uncomment_examples(text: str) -> str:
    """Every example line made live; every other comment must be prose (a capital first),
    so an example written some other way cannot slip past this test."""
    lines = []
    for line in text.splitlines():
        example = EXAMPLE.match(line)
        if example:
            lines.append(example.group(1))
            continue
        assert not line.startswith("#") or re.match(r"# [A-Z]", line), f"neither an example nor prose: {line!r}"
        lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("pyproject", [False, True])
def test_every_example_in_the_init_template_loads_cleanly(tmp_path: Path, pyproject: bool) -> None:
    template = init_config_text(pyproject=pyproject)
    assert template.isascii()
    live = uncomment_examples(template)
    document = tomllib.loads(live)
    settings = document["tool"]["tpucheck"] if pyproject else document
    assert set(settings) == set(KNOWN_KEYS)
    write(tmp_path / "tpucheck-rules" / "team.yaml", "rules: []\n")
    write(tmp_path / ("pyproject.toml" if pyproject else "tpucheck.toml"), live)
    config = load_config(tmp_path)
    assert config.problems == ()
    assert config.per_file_ignores and config.select and config.extend_rules
    ruleset = load_ruleset()
    select_rules(ruleset, config.select or (), config.ignore)
    for _pattern, refs in config.per_file_ignores:
        select_rules(ruleset, refs)


def test_the_schema_is_the_one_list_of_keys_and_choices() -> None:
    """The config's JSON Schema documents every key and is what validates them (issue 25):
    its choices are the report formats, severities and targets the code knows."""
    from tpucheck.config.file import KNOWN_KEYS, config_schema
    from tpucheck.config.formats import FORMAT_NAMES
    from tpucheck.findings import SEVERITIES
    from tpucheck.ruleset.model import TARGETS

    properties = config_schema()["properties"]
    assert tuple(properties["format"]["enum"]) == FORMAT_NAMES
    assert tuple(properties["fail-on"]["enum"]) == SEVERITIES
    assert tuple(properties["target"]["enum"]) == TARGETS
    assert tuple(properties) == KNOWN_KEYS
    assert all(spec.get("description") for spec in properties.values())
