"""The benchmarks keep running: each has the shared smoke mode, reads only what the project's
modules still hold, and a smoke run takes one complete football-data file or is skipped without
the set. (``make bench-smoke`` runs them all; a timing is no test.)"""

import argparse
import ast
import importlib
import sys
import types

import pytest

from bench import common, smoke

BENCHMARKS = smoke.benchmarks()
PROJECT = {"app", "bench", "clock", "engine", "enums", "models", "schemas", "services", "store"}
PROJECT |= {"tools", "web"}


def test_the_runner_finds_every_benchmark():
    """Every module of bench/ but the shared ones is a benchmark the smoke runs take."""
    found = {path.stem for path in (common.ROOT / "bench").glob("*.py")}
    assert set(BENCHMARKS) == found - smoke.NOT_BENCHMARKS
    assert {"engine", "exports", "request_path"} <= set(BENCHMARKS)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_has_the_smoke_mode(name, monkeypatch, capsys):
    """Its command line offers --smoke (through bench.common, before any work is done)."""
    module = importlib.import_module(f"bench.{name}")
    monkeypatch.setattr(sys, "argv", [f"bench.{name}", "--help"])
    with pytest.raises(SystemExit) as exited:
        module.main()
    assert exited.value.code == 0
    assert "--smoke" in capsys.readouterr().out


def _module_reads(name):
    """``(alias, attribute, line)`` of each ``alias.attribute`` the benchmark reads off one of
    the project's modules (names it also binds locally are left out: they may be anything)."""
    module = importlib.import_module(f"bench.{name}")
    tree = ast.parse((common.ROOT / "bench" / f"{name}.py").read_text(encoding="utf-8"))
    bound = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    bound |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            continue
        target = getattr(module, node.value.id, None)
        if (
            node.value.id not in bound
            and isinstance(target, types.ModuleType)
            and target.__name__.split(".")[0] in PROJECT
        ):
            yield node.value.id, node.attr, node.lineno


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmarks_read_only_what_the_modules_hold(name):
    """A function or constant moved elsewhere fails here, not in the next session's run
    (``services.exports.WRITERS`` did)."""
    module = importlib.import_module(f"bench.{name}")
    missing = [
        f"line {line}: {alias}.{attribute}"
        for alias, attribute, line in _module_reads(name)
        if not hasattr(getattr(module, alias), attribute)
    ]
    assert missing == []


def _arguments(folder, *given):
    parser = argparse.ArgumentParser()
    common.data_arguments(parser)
    parser.add_argument("--smoke", action="store_true")
    return parser, parser.parse_args(["--data", str(folder), *given])


def test_a_smoke_run_takes_the_smallest_complete_file(tmp_path):
    """The smallest file quoting every price the benchmarks read, even beside a smaller one
    without the closing over/under prices; a full run takes every file."""
    header = "Div,Date,HomeTeam,AwayTeam,PSH,PSD,PSA,PSCH,PSCD,PSCA"
    (tmp_path / "A_1819.csv").write_text(header + "\n")
    (tmp_path / "B_2324.csv").write_text(header + ",PC>2.5,PC<2.5\n" + "x" * 100 + "\n")
    (tmp_path / "C_2324.csv").write_text(header + ",PC>2.5,PC<2.5\n" + "x" * 200 + "\n")
    parser, args = _arguments(tmp_path, "--smoke")
    assert common.data_files(parser, args) == [tmp_path / "B_2324.csv"]
    parser, args = _arguments(tmp_path)
    assert [path.name for path in common.data_files(parser, args)] == [
        "A_1819.csv",
        "B_2324.csv",
        "C_2324.csv",
    ]


def test_a_smoke_run_without_the_set_is_skipped(tmp_path, capsys):
    parser, args = _arguments(tmp_path / "absent", "--smoke")
    with pytest.raises(SystemExit) as exited:
        common.data_files(parser, args)
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(common.SKIPPED)


def test_a_full_run_without_the_set_fails(tmp_path, capsys):
    parser, args = _arguments(tmp_path)
    with pytest.raises(SystemExit) as exited:
        common.data_files(parser, args)
    assert exited.value.code == 2
    assert "no CSV files" in capsys.readouterr().err
