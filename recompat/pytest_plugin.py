"""recompat's pytest plugin (entry point ``pytest11``): differential tests of torch / MindSpore pairs.

A user's own pair, in about ten lines::

    import numpy as np

    def test_my_block(recompat_compare):
        torch_model, ms_model = MyTorchBlock(), MyMsBlock()           # the two twins, in training mode
        x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
        report = recompat_compare(torch_model, ms_model, [x])    # the round-off rule; or rtol=, atol=
        assert report.passed, str(report)       # str: the failing rows, the verdict

Options (also taken by ``recompat test``)::

    --recompat-device {cpu,gpu,ascend}   devices to run on (repeatable; default: all, unavailable ones skip)
    --recompat-ms-mode {pynative,graph}  MindSpore modes (repeatable; default: both)
    --recompat-json FILE                 every differential result (rows, figures) as JSON
    --recompat-record DIR                save the torch side of each cross-framework comparison
    --recompat-against DIR               compare MindSpore with a recorded torch side instead of running torch

Fixtures: ``recompat_hunt`` / ``recompat_mutant`` (planted bugs the suite must catch; the catch rate is printed),
``recompat_compare`` (compare() with the options' first MindSpore mode and device, results kept for
--recompat-json), ``recompat_options``, and ``recompat_case``: a test that asks for it is parametrized over the
built-in suite's cases (recompat.compat.suite) -- that is how ``recompat test`` runs the suite.

Loading this plugin imports neither torch nor MindSpore: pytest runs that do not use it pay nothing.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from recompat.constants import DEVICES, MS_MODES, TORCH_DEVICES, either

_KEY = "recompat"          # user_properties key: results travel from xdist workers in the test reports


@dataclass(frozen=True)
class RecompatOptions:
    devices: tuple[str, ...]
    ms_modes: tuple[str, ...]
    json_path: Path | None
    record_dir: Path | None
    against_dir: Path | None


def pytest_addoption(parser):
    group = parser.getgroup("recompat", "recompat differential tests (torch vs MindSpore)")
    group.addoption("--recompat-device", action="append", choices=DEVICES, default=None, metavar="DEVICE",
                    help=f"run the pairs on DEVICE: {either(DEVICES)} (repeatable; default: all; a device this "
                         "machine lacks is a skip with its reason)")
    group.addoption("--recompat-ms-mode", action="append", choices=MS_MODES, default=None, metavar="MODE",
                    help=f"MindSpore execution mode: {either(MS_MODES)} (repeatable; default: both)")
    group.addoption("--recompat-json", metavar="FILE", default=None,
                    help="write every differential result (cases, tensor rows, memory figures) as JSON to FILE")
    group.addoption("--recompat-record", metavar="DIR", default=None,
                    help="save the torch side of each cross-framework comparison (npz + JSON metadata) in DIR")
    group.addoption("--recompat-against", metavar="DIR", default=None,
                    help="compare MindSpore with the torch runs recorded in DIR instead of running torch here")


def _options(config) -> RecompatOptions:
    opt = config.getoption
    record, against = opt("--recompat-record"), opt("--recompat-against")
    if record and against:
        raise pytest.UsageError("--recompat-record and --recompat-against exclude each other: record on one "
                                "machine, compare on another")
    if against and not Path(against).is_dir():
        what = "not a directory" if Path(against).exists() else "no such directory"
        raise pytest.UsageError(f"--recompat-against {against}: {what} (make one with "
                                "--recompat-record on the machine with the torch device)")
    # Up front: found only when the first result is written, a bad path would fail every case, or the run's end.
    json_path = opt("--recompat-json")
    if json_path:
        if Path(json_path).is_dir():
            raise pytest.UsageError(f"--recompat-json {json_path}: is a directory — name the JSON file to write")
        _writable("--recompat-json", json_path, Path(json_path).parent)
    if record:
        if Path(record).exists() and not Path(record).is_dir():
            raise pytest.UsageError(f"--recompat-record {record}: exists and is not a directory — name a directory "
                                    "for the recorded runs")
        _writable("--recompat-record", record, Path(record))
    return RecompatOptions(
        devices=tuple(dict.fromkeys(opt("--recompat-device") or DEVICES)),
        ms_modes=tuple(dict.fromkeys(opt("--recompat-ms-mode") or MS_MODES)),
        json_path=Path(opt("--recompat-json")) if opt("--recompat-json") else None,
        record_dir=Path(record) if record else None,
        against_dir=Path(against) if against else None)


def _writable(option: str, value: str, folder: Path) -> None:
    """UsageError unless files can be made in ``folder`` (or in the nearest folder above it that exists)."""
    folder = folder.absolute()
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    if not folder.is_dir():
        raise pytest.UsageError(f"{option} {value}: {folder} is a file, not a directory — name another path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"{option} {value}: cannot write into {folder} (permission denied) — make it "
                                "writable, or name another path")


def pytest_configure(config):
    _options(config)                  # option mistakes are usage errors before anything runs
    config.pluginmanager.register(_Collector(config), "recompat-collector")


@pytest.fixture(scope="session")
def recompat_options(pytestconfig) -> RecompatOptions:
    return _options(pytestconfig)


def pytest_generate_tests(metafunc):
    if "recompat_mutant" in metafunc.fixturenames:
        _mutants(metafunc)
    if "recompat_case" not in metafunc.fixturenames:
        return
    from recompat.compat import suite

    options = _options(metafunc.config)
    cases = suite.cases(devices=options.devices, ms_modes=options.ms_modes)
    metafunc.parametrize("recompat_case", cases, ids=[c.id for c in cases])


def _mutants(metafunc):
    from recompat.compat import mutants

    options = _options(metafunc.config)
    chosen = [m for m in mutants.MUTANTS if all(c.device in options.devices for c in m.cases)]
    metafunc.parametrize("recompat_mutant", chosen, ids=[m.name for m in chosen])


def _keep(request, result: dict) -> None:
    # plain JSON values only: xdist sends user_properties from the workers with execnet
    request.node.user_properties.append((_KEY, json.loads(json.dumps(result, default=str))))


@pytest.fixture
def recompat_run(request, recompat_options):
    """run(case) -> Outcome of the built-in suite; skips, xfails (known differences) or fails the test to match."""
    from recompat.compat import suite

    def run(case):
        outcome = suite.run_case(case, options=suite.Options(recompat_options.record_dir,
                                                             recompat_options.against_dir))
        _keep(request, outcome.to_dict())
        if outcome.status == "skipped":
            pytest.skip(outcome.message)
        if outcome.status == "known":
            pytest.xfail(outcome.message)
        if outcome.status == "failed":
            pytest.fail(outcome.message, pytrace=False)
        return outcome
    return run


@pytest.fixture
def recompat_hunt(request, recompat_options):
    """hunt(mutant) -> Hunt: the planted bug's cases with and without it; fails the test unless the bug is caught
    and the same cases pass without it."""
    from recompat.compat import mutants, suite

    def hunt(mutant):
        result = mutants.hunt(mutant, suite.Options(recompat_options.record_dir, recompat_options.against_dir))
        _keep(request, result.to_dict())
        if not result.control_passed:
            pytest.fail(f"{mutant.name}: the cases fail without the planted bug too, so they prove nothing: "
                        + "; ".join(result.messages), pytrace=False)
        if not result.caught:
            pytest.fail(f"planted bug {mutant.name} ({mutant.description}) was not caught: "
                        + "; ".join(result.messages), pytrace=False)
        return result
    return hunt


@pytest.fixture
def recompat_compare(request, recompat_options):
    """compare(torch_model, ms_model, inputs, **kwargs) with the session's MindSpore mode and device; the report
    goes to --recompat-json. kwargs are compare()'s (weights=, rtol=, atol=, grad_inputs=, ms_mode=, ...): at its
    default weights="auto" a MindSpore model holding the user's converted weights is judged as held, and
    weights="model.ckpt" loads a checkpoint into it first."""
    from recompat.compat import compare

    def run(torch_model, ms_model, inputs, **kwargs):
        kwargs.setdefault("ms_mode", recompat_options.ms_modes[0])
        kwargs.setdefault("device", TORCH_DEVICES.get(recompat_options.devices[0], "cpu"))   # torch's device
        report = compare(torch_model, ms_model, inputs, **kwargs)
        _keep(request, {"id": request.node.nodeid, "check": "compare", "pair": request.node.name,
                        "status": "passed" if report.passed else "failed", "message": report.summary(),
                        "report": report.to_dict()})
        return report
    return run


@pytest.fixture
def recompat_train(request):
    """train(torch_model, ms_model, batches, **kwargs) -> TrainingReport: compare_training, which runs on the CPU
    in MindSpore's PyNative mode whatever --recompat-device/--recompat-ms-mode say; the report goes to
    --recompat-json. kwargs are compare_training's (loss=, optimizer=, schedule=, steps=, ...)."""
    from recompat.compat import compare_training

    def run(torch_model, ms_model, batches, **kwargs):
        report = compare_training(torch_model, ms_model, batches, **kwargs)
        first = report.first_failure
        _keep(request, {"id": request.node.nodeid, "check": "training", "pair": request.node.name,
                        "status": "passed" if report.passed else "failed",
                        "message": str(report).splitlines()[0] + (f"; first out at step {first.step}" if first else ""),
                        "report": report.to_dict()})
        return report
    return run


class _Collector:
    """Gathers the results where the test reports arrive (the main process, with or without xdist)."""

    def __init__(self, config):
        self.config = config
        self.results: list[dict] = []
        self.session = None

    def pytest_sessionstart(self, session):
        self.session = session

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.results += [value for key, value in report.user_properties if key == _KEY]

    def pytest_terminal_summary(self, terminalreporter):
        from recompat.compat.suite import CHECKS, summary_table, write_json

        if not self.results:
            return
        in_suite = [r for r in self.results if r.get("check") in CHECKS]
        if in_suite:
            terminalreporter.section("recompat differential suite")
            terminalreporter.write_line(summary_table(in_suite))
        hunts = [r for r in self.results if r.get("check") == "planted-bug"]
        if hunts:
            from recompat.compat.mutants import catch_rate

            terminalreporter.write_line(catch_rate(hunts))
        path = self.config.getoption("--recompat-json")
        if path:
            try:
                write_json(self.results, path)
            except OSError as exc:   # checked up front; the disk can still fill up: a line, not an INTERNALERROR
                terminalreporter.write_line(f"recompat: error: --recompat-json {path}: cannot write it "
                                            f"({exc.strerror or exc}); the results are not saved", red=True)
                if self.session is not None and not self.session.exitstatus:
                    self.session.exitstatus = pytest.ExitCode.INTERNAL_ERROR   # what pytest's run returns
                return
            terminalreporter.write_line(f"recompat: {len(self.results)} results written to {path}")
