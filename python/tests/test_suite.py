"""dmlref.suite against suites written by dmlref-check generate and graded by dmlref-check verify:
a run through dmlref verifies 100%, a runtime that gets one operator wrong is caught on exactly the
cases it gets wrong, a suite that is not as generated is refused, and results never land in (or
remove anything of) the suite.

The tool is found through DMLREF_CHECK (scripts/test.sh sets it to build/tools/dmlref-check)."""
import hashlib
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import dmlref.suite as ds

ROOT = Path(__file__).resolve().parents[2]
TOOL = os.environ.get("DMLREF_CHECK")
pytestmark = pytest.mark.skipif(
    not TOOL, reason="DMLREF_CHECK is unset: these tests need the dmlref-check tool "
                     "(scripts/test.sh sets it to build/tools/dmlref-check)")


def tool(*args, check_status=None):
    r = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=300)
    if check_status is not None:
        assert r.returncode == check_status, r.stdout + r.stderr
    return r


def python(*args):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def tree_digest(root):
    """Every file under root (links as links) with its bytes' hash: proves nothing changed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = "link:" + os.readlink(p)
            elif os.path.isfile(p):
                out[rel] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


def verify(suite, results, tmp_path, *extra):
    """Runs verify with --json and --junit; returns (exit status, {"<op>/<case>": status},
    stdout), checking that the JUnit file parses and agrees."""
    n = len(list(tmp_path.glob("verify-*.json")))
    report, junit = tmp_path / f"verify-{n}.json", tmp_path / f"verify-{n}.xml"
    r = tool("verify", suite, "--results", results, "--json", report, "--junit", junit, *extra)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    cases = json.loads(report.read_text())["cases"]
    outcome = {c["name"]: c["status"] for c in cases}
    # Undocumented cases are reported apart: JUnit skips them when they fail.
    counted = {c["name"] for c in cases if not c.get("undocumented", False)}
    failing = set()
    for tc in ET.parse(junit).getroot().iter("testcase"):
        if tc.find("failure") is not None or tc.find("error") is not None:
            failing.add(f"{tc.get('classname').removeprefix('dmlref.')}/{tc.get('name')}")
    assert failing == {p for p, v in outcome.items()
                       if p in counted and v in ("failed", "not run", "timeout")}
    return r.returncode, outcome, r.stdout


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    """The default suite: every operator, every case kind, the large cases included."""
    d = tmp_path_factory.mktemp("gen") / "suite"
    tool("generate", "--out", d, check_status=0)
    return d


@pytest.fixture(scope="module")
def lean_suite(tmp_path_factory):
    """Every operator and case kind, without the large cases (a faster suite to run twice)."""
    d = tmp_path_factory.mktemp("lean") / "suite"
    tool("generate", "--out", d, "--max-bytes", "32000000", check_status=0)
    return d


@pytest.fixture(scope="module")
def small_suite(tmp_path_factory):
    """A small suite (JOIN and SPLIT, no large cases) to copy and tamper with."""
    d = tmp_path_factory.mktemp("small") / "suite"
    tool("generate", "--out", d, "--ops", "join,split", "--max-bytes", "16000000", check_status=0)
    return d


def tree_state(root):
    """Every entry under root by its lstat (type, size, mtime): what a test may have changed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (stat.S_IFMT(st.st_mode),
                                             None if stat.S_ISDIR(st.st_mode) else st.st_size,
                                             None if stat.S_ISDIR(st.st_mode) else st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def _work_suite(small_suite, tmp_path_factory):
    d = tmp_path_factory.mktemp("work") / "suite"
    shutil.copytree(small_suite, d)
    return d, tree_state(d)


@pytest.fixture
def suite_copy(_work_suite, small_suite):
    """A copy of the small suite to tamper with; what a test changed is put back afterwards
    (copying only those files: a fresh copy per test costs seconds)."""
    d, pristine = _work_suite
    yield d
    now = tree_state(d)
    for rel in sorted(set(now) - set(pristine), reverse=True):  # added: children first
        p = d / rel
        shutil.rmtree(p) if now[rel][0] == stat.S_IFDIR else p.unlink()
    for rel in sorted(pristine):
        if pristine[rel][0] != stat.S_IFDIR and now.get(rel) != pristine[rel]:
            p = d / rel
            if os.path.lexists(p):
                p.unlink()
            shutil.copy2(small_suite / rel, p)
    assert tree_state(d) == pristine


def load_example():
    spec = importlib.util.spec_from_file_location("run_suite_custom",
                                                  ROOT / "examples" / "run_suite_custom.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def same_bits_or_collision(output, actual, expected):
    """True when actual equals expected bit for bit, or differs only where SCATTER's updates
    collide and holds one of the accepted candidates there."""
    a = actual.reshape(-1).view(f"u{actual.itemsize}")
    e = expected.reshape(-1).view(f"u{expected.itemsize}")
    for i in np.flatnonzero(a != e):
        if int(a[i]) not in output.collisions.get(int(i), []):
            return False
    return True


# ---- a run through dmlref itself ---------------------------------------------------------------

def test_python_run_verifies_100_percent(suite_dir, tmp_path):
    results = tmp_path / "results"
    before = tree_digest(suite_dir)
    r = python("-m", "dmlref.suite", "run", suite_dir, "--results", results)
    assert r.returncode == 0, r.stderr
    status, outcome, stdout = verify(suite_dir, results, tmp_path)
    cases = json.loads((suite_dir / "suite.json").read_text())["cases"]
    assert status == 0, stdout
    assert sorted(outcome) == sorted(cases) and len(cases) > 800
    assert all(v == "passed" for v in outcome.values())
    assert tree_digest(suite_dir) == before
    # Each case left exactly the protocol's files: exit_code, log.txt, one file per output.
    suite = ds.load(suite_dir)
    for case in suite:
        names = set(os.listdir(results / case.op / case.name))
        assert names == {"exit_code", "log.txt"} | {o.result for o in case.outputs}, case.path


def test_python_run_verifies_100_percent_at_an_old_feature_level(tmp_path):
    """DirectML 1.0's suite: fewer operators and types; the run passes the case's level on."""
    suite = tmp_path / "suite"
    tool("generate", "--out", suite, "--feature-level", "1_0", "--max-bytes", "32000000",
         check_status=0)
    assert ds.load(suite).feature_level == "1_0"
    r = python("-m", "dmlref.suite", "run", suite, "--results", tmp_path / "results")
    assert r.returncode == 0, r.stderr
    status, outcome, stdout = verify(suite, tmp_path / "results", tmp_path)
    assert status == 0 and outcome and all(v == "passed" for v in outcome.values()), stdout


def test_run_reference_writes_the_expected_buffers(suite_dir):
    """Independently of verify: every valid case's buffers equal the expected files (any accepted
    candidate where SCATTER's updates collide), padding holding the sentinel."""
    checked = 0
    for case in ds.load(suite_dir):
        if not case.valid:
            with pytest.raises(ds.Rejected) as e:
                case.run_reference()
            assert e.value.rule == case.rule and e.value.stage in ("create", "bind")
            continue
        buffers = case.run_reference()
        assert len(buffers) == len(case.outputs) >= 1
        for o, b in zip(case.outputs, buffers):
            expected = o.load_expected()
            assert b.dtype == expected.dtype == o.dtype and b.shape == expected.shape == o.shape
            assert same_bits_or_collision(o, b, expected), case.path
        checked += 1
    assert checked > 700


def test_case_exposes_desc_inputs_and_outputs(suite_dir):
    suite = ds.load(suite_dir)
    by_op = {}
    for case in suite.cases(filter=r"_in-broadcast|_in-padded-transposed|_out-padded"):
        by_op.setdefault(case.op, case)
    assert set(by_op) == set(ds.OPS)
    join = next(c for c in suite.cases(ops=["join"]) if c.valid and c.desc["InputCount"] >= 2)
    assert join.op == "join" and join.path == f"join/{join.name}" and join.rule is None
    assert isinstance(join.desc["Axis"], int) and len(join.desc["InputTensors"]) == join.desc[
        "InputCount"]
    inputs = join.load_inputs()
    assert set(inputs) == {t.field for t in join.desc["InputTensors"]}
    for t in inputs.values():
        assert t.buffer.ndim == 1 and not t.buffer.flags.writeable
        # The buffer is the .npy named in model.json, zero-filled to sizeInBytes.
        data = np.load(join.dir + f"/{t.resource}.npy")
        assert np.array_equal(t.buffer[:data.size].view(np.uint8), data.view(np.uint8))
        v = t.view()
        assert v.shape == tuple(t.sizes) and v.dtype == t.dtype
        assert v.strides == tuple(s * t.dtype.itemsize for s in t.strides)
    # Without load_inputs(), a buffer is read on first use; desc and inputs hold the same tensors.
    other = next(c for c in suite.cases(ops=["reverse_subsequences"]) if c.valid)
    lengths = other.desc["SequenceLengthsTensor"]
    assert other.inputs["SequenceLengthsTensor"] is lengths
    assert lengths.view().shape[other.desc["Axis"]] == 1
    (o,) = join.outputs
    b = o.new_buffer()
    assert b.shape == o.shape and b.dtype == o.dtype and b.size == o.size
    assert np.all(b.view(f"u{b.itemsize}") == np.array(o.sentinel).view(f"u{b.itemsize}"))
    assert o.view(b).shape == tuple(o.tensor.sizes) and np.shares_memory(o.view(b), b)
    # GATHER_ND1's desc keeps DirectML's full rank; its counts say which dimensions are meaningful.
    gather = next(c for c in suite.cases(ops=["gather_nd1"]) if c.valid)
    assert len(gather.desc["InputTensor"].sizes) == len(gather.desc["OutputTensor"].sizes)
    assert {"InputDimensionCount", "IndicesDimensionCount", "BatchDimensionCount"} <= set(
        gather.desc)
    for case in suite:
        fields = {f for f, v in case.desc.items() if isinstance(v, ds.Tensor)} | {
            t.field for v in case.desc.values() if isinstance(v, list) for t in v}
        assert not any(f.startswith("Output") for f in case.inputs), case.path
        if case.valid:
            assert set(case.inputs) | {o.tensor.field for o in case.outputs} == fields
    invalid = [c for c in suite if not c.valid]
    assert invalid and all(c.stage in ("create", "bind") and c.rule for c in invalid)
    assert {c.rule for c in invalid} >= {"J1", "S6", "SC7", "G9", "R5", "T13"}
    assert not {"SC8", "G10"} & {c.rule for c in invalid}  # values are not DirectML errors


def test_cases_select_by_op_and_regex(suite_dir):
    suite = ds.load(suite_dir)
    split = list(suite.cases(ops=["split"]))
    assert split and all(c.op == "split" for c in split)
    assert len(split) == sum(p.startswith("split/") for p in suite.case_paths)
    picked = [c.path for c in suite.cases(filter=r"^scatter/.*invalid_")]
    assert picked and all(p.startswith("scatter/") and "invalid_" in p for p in picked)
    assert len(list(suite)) == len(suite) == len(suite.case_paths)
    with pytest.raises(ValueError, match="unknown operator"):
        list(suite.cases(ops=["concat"]))


def test_tensor_view_never_leaves_its_buffer(suite_dir):
    case = next(c for c in ds.load(suite_dir).cases(ops=["join"]) if c.valid)
    t = next(iter(case.load_inputs().values()))
    t.sizes = [t.buffer.size + 1]
    t.strides = [1]
    with pytest.raises(ValueError, match="addresses element"):
        t.view()


def test_run_records_a_crash_as_that_case_failing(lean_suite, tmp_path, monkeypatch):
    suite = ds.load(lean_suite)
    victim = next(c for c in suite.cases(ops=["scatter"]) if c.valid).path
    real = ds.Case.run_reference

    def crashing(case):
        if case.path == victim:
            raise RuntimeError("kernel launch failed")
        return real(case)

    monkeypatch.setattr(ds.Case, "run_reference", crashing)
    results = tmp_path / "results"
    ds.run(suite, results, ops=["scatter"], out=open(os.devnull, "w"))
    log = (results / victim / "log.txt").read_text()
    assert "RuntimeError: kernel launch failed" in log
    assert (results / victim / "exit_code").read_text() == "1\n"
    status, outcome, stdout = verify(lean_suite, results, tmp_path, "--filter", "^scatter/")
    assert status == 1
    assert {p for p, v in outcome.items() if v != "passed"} == {victim}, stdout
    assert outcome[victim] == "failed" and f"FAIL {victim}:" in stdout


# ---- a user's runtime --------------------------------------------------------------------------

def test_example_runtime_verifies_100_percent(lean_suite, tmp_path):
    results = tmp_path / "results"
    r = python(ROOT / "examples" / "run_suite_custom.py", lean_suite, results)
    assert r.returncode == 0, r.stderr
    status, outcome, stdout = verify(lean_suite, results, tmp_path)
    assert status == 0 and outcome and all(v == "passed" for v in outcome.values()), stdout


def wrong_join(case, buffers):
    """A plausible bug: the inputs joined in reverse order."""
    inputs = [t.view() for t in reversed(case.desc["InputTensors"])]
    case.outputs[0].view(buffers[0])[...] = np.concatenate(inputs, axis=case.desc["Axis"])


def wrong_split(case, buffers):
    """Another: the outputs computed right, but each whole buffer cleared first (padding lost)."""
    for b in buffers:
        b[...] = 0
    load_example().numpy_split(case, buffers)


@pytest.mark.parametrize("op, wrong", [("join", wrong_join), ("split", wrong_split)])
def test_verify_names_exactly_the_cases_a_wrong_runtime_gets_wrong(lean_suite, tmp_path, op,
                                                                    wrong):
    example = load_example()
    results = tmp_path / "results"
    example.run_suite(lean_suite, results, {**example.IMPLEMENTATIONS, op: wrong})
    # Which cases the wrong implementation really gets wrong, judged here without verify.
    wrong_cases = set()
    for case in ds.load(lean_suite).cases(ops=[op]):
        if case.valid:
            written = [np.load(results / case.op / case.name / o.result) for o in case.outputs]
            if not all(same_bits_or_collision(o, w, o.load_expected())
                       for o, w in zip(case.outputs, written)):
                wrong_cases.add(case.path)
    n_valid = sum(c.valid for c in ds.load(lean_suite).cases(ops=[op]))
    assert len(wrong_cases) > n_valid // 3  # the bug shows in many cases, not a few
    status, outcome, stdout = verify(lean_suite, results, tmp_path)
    assert status == 1
    assert {p for p, v in outcome.items() if v != "passed"} == wrong_cases
    for path in wrong_cases:
        assert f"FAIL {path}:" in stdout


def test_refusal_needs_a_non_zero_exit_and_writes_the_stage_marker(suite_copy, tmp_path):
    suite = ds.load(suite_copy)
    invalid = next(c for c in suite if not c.valid)
    results = tmp_path / "results"
    with pytest.raises(ValueError, match="non-zero"):
        invalid.write_result(results, None, exit_code=0, stage="create")
    with pytest.raises(ValueError, match="stage"):
        invalid.write_result(results, None, exit_code=62, stage="compile")
    assert not results.exists()  # nothing written for a call that failed
    d = Path(invalid.write_result(results, None, exit_code=ds.EXIT_CREATE, stage="create",
                                  log="my runtime: Axis out of range"))
    assert (d / "exit_code").read_text() == "62\n"
    log = (d / "log.txt").read_text()
    assert log.startswith("my runtime: Axis out of range\n")
    assert "ERROR creating dispatchable" in log
    d = Path(invalid.write_result(results, None, exit_code=ds.EXIT_BIND, stage="bind"))
    assert "ERROR while binding resources" in (d / "log.txt").read_text()
    assert "ERROR creating dispatchable" not in (d / "log.txt").read_text()


def test_verify_passes_a_refusal_only_at_the_case_stage(small_suite, tmp_path):
    """Invalid cases refused through write_result at their own stage pass; refused at the other
    stage, crashed, or unparsed (as DxDispatch logs it) they fail, whatever the exit code."""
    suite = ds.load(small_suite)
    results = tmp_path / "results"
    ds.run(suite, results, out=open(os.devnull, "w"))
    status, outcome, stdout = verify(small_suite, results, tmp_path)
    assert status == 0, stdout
    invalid = [c for c in suite if not c.valid]
    assert {c.stage for c in invalid} == {"create", "bind"}
    assert any(c.undocumented for c in invalid)  # judged alike, reported apart
    spoiled = {}
    for k, case in enumerate(invalid):
        how = ("wrong stage", "crash", "parse")[k % 3]
        if how == "wrong stage":
            other = "bind" if case.stage == "create" else "create"
            code = ds.EXIT_CREATE if other == "create" else ds.EXIT_BIND
            case.write_result(results, None, exit_code=code, stage=other)
        elif how == "crash":
            case.write_result(results, None, exit_code=139, log="Segmentation fault")
        else:
            case.write_result(results, None, exit_code=255, log="Failed to parse the model")
        spoiled[case.path] = how
    status, outcome, stdout = verify(small_suite, results, tmp_path)
    assert status == 1
    assert {p for p, v in outcome.items() if v != "passed"} == set(spoiled), stdout
    assert all(outcome[p] == "failed" for p in spoiled)
    report = json.loads(sorted(tmp_path.glob("verify-*.json"))[-1].read_text())
    reasons = {c["name"]: c["reason"] for c in report["cases"]}
    assert all("parse" in reasons[p] for p, how in spoiled.items() if how == "parse")


def test_write_result_checks_the_buffers_before_writing(suite_copy, tmp_path):
    case = next(c for c in ds.load(suite_copy) if c.valid)
    results = tmp_path / "results"
    good = case.run_reference()
    with pytest.raises(ValueError, match="output"):
        case.write_result(results, good + good)
    with pytest.raises(ValueError, match="must be"):
        case.write_result(results, [np.zeros(b.shape, np.float32 if b.dtype == np.float64
                                             else np.float64) for b in good])
    with pytest.raises(ValueError, match="elements"):
        case.write_result(results, [b.reshape(-1)[1:] for b in good])
    assert not results.exists()
    # A 1-D buffer of the right size is written in the result file's shape.
    case.write_result(results, [b.reshape(-1) for b in good])
    for o, b in zip(case.outputs, good):
        written = np.load(results / case.op / case.name / o.result)
        assert written.shape == o.shape and written.tobytes() == b.tobytes()


def test_write_result_replaces_links_and_touches_only_its_files(suite_copy, tmp_path):
    case = next(c for c in ds.load(suite_copy) if c.valid)
    out = tmp_path / "results" / case.op / case.name
    out.mkdir(parents=True)
    keep = tmp_path / "precious.txt"
    keep.write_text("user data")
    (out / "notes.txt").write_text("mine")
    (out / case.outputs[0].result).symlink_to(keep)
    (out / "exit_code").symlink_to(keep)
    case.write_result(tmp_path / "results", case.run_reference())
    assert keep.read_text() == "user data"  # never written through a link
    assert (out / "notes.txt").read_text() == "mine"
    assert not (out / case.outputs[0].result).is_symlink()
    assert (out / "exit_code").read_text() == "0\n"
    assert sorted(os.listdir(out)) == sorted(
        {"exit_code", "log.txt", "notes.txt"} | {o.result for o in case.outputs})
    # A run that wrote no outputs removes the stale ones of an earlier run, nothing else.
    case.write_result(tmp_path / "results", None, exit_code=1, log="crashed")
    assert sorted(os.listdir(out)) == ["exit_code", "log.txt", "notes.txt"]


# ---- results never overlap the suite -----------------------------------------------------------

@pytest.mark.parametrize("where", ["suite", "inside", "parent", "link"])
def test_run_refuses_results_that_overlap_the_suite(suite_copy, tmp_path, where):
    results = {"suite": suite_copy, "inside": suite_copy / "join" / "results",
               "parent": suite_copy.parent, "link": tmp_path / "link"}[where]
    if where == "link":
        results.symlink_to(suite_copy)
    before = tree_digest(suite_copy)
    r = python("-m", "dmlref.suite", "run", suite_copy, "--results", results)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "overlaps the suite" in r.stderr
    assert tree_digest(suite_copy) == before
    assert ds.load(suite_copy)  # still intact
    r = python(ROOT / "examples" / "run_suite_custom.py", suite_copy, results)
    assert r.returncode == 2 and "overlaps the suite" in r.stderr
    assert tree_digest(suite_copy) == before


def test_write_result_refuses_an_op_folder_linked_into_the_suite(suite_copy, tmp_path):
    case = next(c for c in ds.load(suite_copy) if c.valid)
    results = tmp_path / "results"
    results.mkdir()
    (results / case.op).symlink_to(suite_copy / case.op)
    before = tree_digest(suite_copy)
    with pytest.raises(ds.SuiteError, match="overlaps the suite"):
        case.write_result(results, case.run_reference())
    assert tree_digest(suite_copy) == before


# ---- a suite that is not as generated ----------------------------------------------------------

def edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def first_valid(suite_dir):
    paths = json.loads((suite_dir / "suite.json").read_text())["cases"]
    return next(suite_dir / p for p in paths
                if json.loads((suite_dir / p / "case.json").read_text())["valid"])


def tamper_case_json(s):
    edit_json(first_valid(s) / "case.json", lambda c: c.update(valid=False))


def tamper_expected(s):
    p = first_valid(s) / "expected_0.npy"
    data = bytearray(p.read_bytes())
    data[-1] ^= 1
    p.write_bytes(bytes(data))


def link_expected(s):
    p = first_valid(s) / "expected_0.npy"
    copy = s.parent / "elsewhere.npy"
    shutil.copyfile(p, copy)
    p.unlink()
    p.symlink_to(copy)  # same bytes, but outside the suite


def remove_model(s):
    (first_valid(s) / "model.json").unlink()


def fifo_input(s):
    d = first_valid(s)
    p = next(d.glob("Input*.npy"))
    p.unlink()
    os.mkfifo(p)


def manifest_path(bad):
    def change(s):
        def edit(info):
            files = info["manifest"]["files"]
            files[bad] = next(iter(files.values()))
        edit_json(s / "suite.json", edit)
    return change


def no_manifest(s):
    edit_json(s / "suite.json", lambda info: info.pop("manifest"))


def unlisted_case(s):
    def edit(info):
        case = info["cases"][0]
        del info["manifest"]["files"][f"{case}/case.json"]
    edit_json(s / "suite.json", edit)


@pytest.mark.parametrize("tamper, message", [
    (tamper_case_json, "modified since the suite was generated"),
    (tamper_expected, "modified since the suite was generated"),
    (link_expected, "link"),
    (remove_model, "missing"),
    (fifo_input, "not a regular file"),
    (manifest_path("../outside.npy"), "absolute, contains '..'"),
    (manifest_path("/etc/passwd"), "absolute, contains '..'"),
    (manifest_path("join/./x"), "absolute, contains '..'"),
    (no_manifest, "no manifest"),
    (unlisted_case, "not in the manifest"),
])
def test_load_refuses_a_suite_that_is_not_as_generated(suite_copy, tamper, message):
    tamper(suite_copy)
    with pytest.raises(ds.SuiteError, match=message):
        ds.load(suite_copy)


def test_json_that_does_not_parse_is_named(suite_copy):
    case_dir = first_valid(suite_copy)
    (case_dir / "case.json").write_bytes(b"{\"op\": ")
    rehash(suite_copy, case_dir, "case.json")  # as generated, says the manifest
    suite = ds.load(suite_copy)
    with pytest.raises(ds.SuiteError, match=f"{case_dir / 'case.json'}: not JSON"):
        list(suite)
    (suite_copy / "suite.json").write_bytes(b"\xff")
    with pytest.raises(ds.SuiteError, match=f"{suite_copy / 'suite.json'}: not JSON"):
        ds.load(suite_copy)


def rehash(suite_dir, case_dir, name):
    """Rewrites the manifest's hash of an edited file: tampering that a hash cannot catch."""
    rel = case_dir.relative_to(suite_dir).as_posix() + "/" + name
    digest = hashlib.sha256((case_dir / name).read_bytes()).hexdigest()
    edit_json(suite_dir / "suite.json",
              lambda info: info["manifest"]["files"].update({rel: digest}))


def test_a_rehashed_model_cannot_ask_for_a_huge_output_buffer(suite_copy):
    case_dir = first_valid(suite_copy)

    def grow(model):
        (name,) = [n for n, r in model["resources"].items() if "value" in r["initialValues"]]
        r = model["resources"][name]
        count = (1 << 31) // ds._dtype_of(r["initialValuesDataType"]).itemsize
        r["sizeInBytes"] = 1 << 31
        r["initialValues"]["valueCount"] = count
        for c in model["commands"]:
            if c.get("resource") == name:
                c["dimensions"] = [count]

    edit_json(case_dir / "model.json", grow)
    rehash(suite_copy, case_dir, "model.json")
    suite = ds.load(suite_copy)
    with pytest.raises(ds.SuiteError, match="larger than its expected file"):
        list(suite.cases(filter="^" + case_dir.relative_to(suite_copy).as_posix() + "$"))


def test_cli_reports_a_tampered_suite_with_exit_2(suite_copy, tmp_path):
    tamper_case_json(suite_copy)
    r = python("-m", "dmlref.suite", "run", suite_copy, "--results", tmp_path / "results")
    assert r.returncode == 2 and "modified since the suite was generated" in r.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("field, bad", [
    ("expected", "/dev/zero"), ("expected", "../../join/x/expected_0.npy"),
    ("expected", "sub/expected_0.npy"), ("result", "/tmp/output_0.npy"), ("result", ".."),
    ("result", "exit_code"), ("result", "log.txt"), ("result", "")])
def test_case_json_paths_stay_in_the_case_directory(suite_copy, field, bad):
    """An output path that is not a plain file of the case's directory is refused, even with the
    manifest's hash rewritten to match the edited case.json."""
    case_dir = first_valid(suite_copy)
    edit_json(case_dir / "case.json", lambda c: c["outputs"][0].update({field: bad}))
    rehash(suite_copy, case_dir, "case.json")
    suite = ds.load(suite_copy)
    with pytest.raises(ds.SuiteError, match="plain file name|may not be"):
        list(suite)


def test_list_command(suite_dir):
    r = python("-m", "dmlref.suite", "list", suite_dir, "--ops", "scatter",
               "--filter", "invalid_SC")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines and all(line.startswith("scatter/") and "\tinvalid SC" in line for line in lines)
