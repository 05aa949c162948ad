"""The verify ledger: a machine that never judged anything reads an unchanged case's proof from
the ledger committed with the corpus; a judgement it lacks (a changed case) fails --check-ledger;
an entry a fresh judgement contradicts fails --recheck; a pasted repro that does not parse is the
draft's ERROR, never a proof."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPORA, made_once_across_workers
from kregress.bisect.triage.importer import Evidence, UpstreamIssue, write_draft
from kregress.bisect.triage.verify import judge_bad
from kregress.cli import main
from kregress.judging_service import CaseRun
from kregress.manifest import load_case


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copytree(CORPORA / "verify" / "proven_control", tmp_path / "corpus" / "proven_control")
    return tmp_path / "corpus"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """proven_control judged and its ledger written, once per test run: the tests that start from
    a written ledger copy its folder (each with a cache of its own, so nothing judged is shared)."""

    def write(folder: Path) -> dict:
        shutil.copytree(CORPORA / "verify" / "proven_control", folder / "corpus" / "proven_control")
        command = [sys.executable, "-m", "kregress.cli", "verify", "--corpus", str(folder / "corpus"),
                   "proven_control", "--write-ledger"]  # fmt: skip
        env = {**os.environ, "KREGRESS_CACHE_DIR": str(folder / "cache")}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
        return {"corpus": str(folder / "corpus"), "code": done.returncode, "said": done.stdout + done.stderr}

    return made_once_across_workers(tmp_path_factory, "verify-ledger-written", write)


@pytest.fixture
def ledger_written(written: dict, corpus: Path) -> Path:
    """The corpus with the ledger `written` made for it (the case's files are the same)."""
    assert written["code"] == 0, written["said"]
    shutil.copy(Path(written["corpus"]) / "verify-ledger.json", corpus / "verify-ledger.json")
    return corpus


def verify(capsys: pytest.CaptureFixture[str], folder: Path, *extra: str) -> tuple[int, str]:
    code = main(["verify", "--corpus", str(folder), "proven_control", *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_an_empty_machine_reads_unchanged_proofs_from_the_ledger(
    written: dict,
    ledger_written: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corpus = ledger_written
    assert "1 of 1 judgements made now" in written["said"]
    ledger = json.loads((corpus / "verify-ledger.json").read_text())
    (entry,) = ledger["entries"].values()
    assert (entry["case"], entry["toolchain"], entry["target"]) == ("proven_control", "matrix", "cuda:sm_90")
    assert entry["outcomes"]["control-strided-vector-loads[cuda:sm_90]"] == "FAIL"
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "empty"))  # nothing remembered here
    code, said = verify(capsys, corpus, "--check-ledger")
    assert code == 0, said
    assert "PROVEN      proven_control" in said and "0 of 1 judgements made now, 1 reused" in said
    assert "ledger: 0 missing, 0 contradicted" in said


def test_a_changed_case_missing_from_the_ledger_fails_the_check(
    ledger_written: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = ledger_written
    repro = corpus / "proven_control" / "repro.py"
    repro.write_text(repro.read_text() + "\nEDITED = True\n")
    code, said = verify(capsys, corpus, "--check-ledger")
    assert code == 1
    assert "PROVEN      proven_control" in said  # judged now all the same
    assert "LEDGER MISSING proven_control under the matrix toolchain on cuda:sm_90" in said
    assert verify(capsys, corpus)[0] == 0  # without the check, a missing entry is only judged
    assert verify(capsys, corpus, "--write-ledger")[0] == 0
    code, said = verify(capsys, corpus, "--check-ledger")
    assert code == 0 and "ledger: 0 missing" in said


def test_a_ledger_entry_a_fresh_judgement_contradicts_fails_the_recheck(
    ledger_written: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = ledger_written
    path = corpus / "verify-ledger.json"
    ledger = json.loads(path.read_text())
    (entry,) = ledger["entries"].values()
    entry["outcomes"]["vector-loads[cuda:sm_90]"] = "XFAIL"  # a wrong (or forged) entry
    path.write_text(json.dumps(ledger))
    code, said = verify(capsys, corpus, "--check-ledger")
    assert code == 1  # read back as it is: the case's own item does not PASS
    code, said = verify(capsys, corpus, "--check-ledger", "--recheck", "1", "--seed", "7")
    assert code == 1
    assert "judging again, though the ledger holds them: proven_control (--seed 7" in said
    assert "LEDGER WRONG proven_control under the matrix toolchain on cuda:sm_90: the ledger says" in said
    assert "vector-loads[cuda:sm_90] XFAIL, judged now" in said


def test_drafts_of_import_are_left_out_of_a_ledger_check_of_the_whole_corpus(
    ledger_written: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A working tree holds git-ignored drafts a fresh clone lacks: checking or rewriting the
    ledger over the whole corpus leaves them out, saying so, instead of failing on their absence."""
    corpus = ledger_written
    shutil.copytree(corpus / "proven_control", corpus / "triton_7_draft")
    code = main(["verify", "--corpus", str(corpus), "--check-ledger"])
    said = capsys.readouterr().err
    assert code == 0, said
    assert "left out 1 draft(s) of kregress import (triton_7_draft)" in said and "LEDGER MISSING" not in said
    code = main(["verify", "--corpus", str(corpus), "--check-ledger", "triton_7_draft"])
    assert code == 1 and "LEDGER MISSING triton_7_draft" in capsys.readouterr().err  # named: judged


def test_an_unreadable_ledger_names_its_file(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (corpus / "verify-ledger.json").write_text('{"format": 1, "entries": {"x": {"case": 3}}}')
    code, said = verify(capsys, corpus)
    assert code == 2 and "verify-ledger.json: not a verify ledger" in said


CUT_SHORT = """import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets) + 1)


x = torch.randn(256, device="cuda")
add_kernel[(1,)](x, torch.empty_like(x), 256, BLOCK=256
"""


def test_a_pasted_repro_cut_short_is_the_drafts_error_and_never_proven(tmp_path: Path) -> None:
    """A paste cut inside its last call is a SyntaxError of the draft: an ERROR naming its line,
    which no bad end can rest on (it once read as FAIL RUNTIME_ERROR, and verify called it PROVEN)."""
    issue = UpstreamIssue("https://github.com/triton-lang/triton/issues/1", "triton-lang/triton", 1, False,
                          "cut short", "", [], [], dt.datetime(2026, 1, 1), None)  # fmt: skip
    folder = tmp_path / "corpus" / "cut_short_draft"
    write_draft(folder, issue, Evidence(CUT_SHORT, 1, "RuntimeError", "triton"))
    observation = CaseRun(tmp_path / "corpus", folder.name, "runs", "cpu:interpreter").observe(None)
    assert {name: r.outcome for name, r in observation.records.items()} == {"runs[cpu:interpreter]": "ERROR"}
    message = observation.records["runs[cpu:interpreter]"].message or ""
    assert "pasted.py's own code fails at" in message and "pasted.py:13: SyntaxError" in message
    check = judge_bad(load_case(folder / "case.toml"), observation, "triton==3.6.0", "cpu:interpreter")
    assert not check.ok
    assert check.why.startswith("runs[cpu:interpreter] did not FAIL under the compiler that has the bug")
    assert "runs[cpu:interpreter] ERROR: " in check.why and "SyntaxError" in check.why


def test_a_name_the_paste_never_binds_is_its_own_error_one_it_binds_is_not(tmp_path: Path) -> None:
    """A helper left out of the paste is the draft's ERROR; a name the paste binds but that is not
    found when its code runs (an interpreter running a kernel body in the wrong scope) stays an
    exception of the code under test, for the compiler to answer for."""
    from kregress.child_results import CaseError
    from kregress.pasted import execute

    path = tmp_path / "pasted.py"
    with pytest.raises(CaseError, match=r"pasted.py's own code fails at .*pasted.py:2: NameError: .*helper"):
        execute(path, "import math\nprint(helper(math.pi))\n")
    with pytest.raises(NameError, match="later"):
        execute(path, "def first():\n    return later\n\n\nfirst()\nlater = 2\n")
    # top-level code reading a name bound only further down (an excerpt pasted above its kernel):
    # no compiler ran it, so it is the paste's own error even though the paste binds the name
    with pytest.raises(CaseError, match=r"pasted.py:1: NameError: name 'tl' is not defined"):
        execute(path, "for _ in tl.range(0, 4):\n    pass\nimport math as tl\n")


def test_cases_verified_at_a_time_give_the_verdicts_and_ledger_of_one_at_a_time(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-j 2` judges two cases at once: the table keeps the corpus's order, every judgement is
    counted and written to the ledger, as one case at a time does."""
    shutil.copytree(CORPORA / "verify" / "control_holds", corpus / "control_holds")
    said, ledgers = [], []
    for jobs in ("1", "2"):
        monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / f"cache-j{jobs}"))  # judged afresh each time
        (corpus / "verify-ledger.json").unlink(missing_ok=True)
        code = main(["verify", "--corpus", str(corpus), "--write-ledger", "-j", jobs])
        captured = capsys.readouterr()
        assert code == 1, captured.err  # control_holds is not proven
        assert "2 of 2 judgements made now" in captured.err
        said.append(re.sub(r"[\d.]+ s\)", "… s)", captured.out))  # each case's seconds
        ledgers.append(json.loads((corpus / "verify-ledger.json").read_text())["entries"])
    assert said[1] == said[0] and "PROVEN      proven_control" in said[0] and "control_holds" in said[0]
    assert ledgers[1] == ledgers[0] and len(ledgers[0]) == 2


def test_a_bad_end_failing_otherwise_than_the_issue_is_refused_and_verify_says_why(tmp_path: Path) -> None:
    """The wrong bug once proven: a wrong-value report whose paste the oldest releases' interpreter
    refuses with an exception of its own. The draft's `fails_with` holds the bad end to the
    issue's failure (a wrong value), so that exception proves nothing, and verify says so."""
    issue = UpstreamIssue("https://github.com/triton-lang/triton/issues/1", "triton-lang/triton", 1, False,
                          "wrong sum", "", [], [], dt.datetime(2026, 1, 1), None)  # fmt: skip
    folder = tmp_path / "corpus" / "wrong_bug_draft"
    code = "import triton\nraise AssertionError('triton.language must be visible from within jit function')\n"
    write_draft(folder, issue, Evidence(code, 1, [], "triton"))
    observation = CaseRun(tmp_path / "corpus", folder.name, "runs", "cpu:interpreter").observe(None)
    assert observation.records["runs[cpu:interpreter]"].outcome == "FAIL"
    manifest = (folder / "case.toml").read_text()
    reproduce = '[reproduce]\ntargets = ["cpu:interpreter"]\nbad = ["triton==3.6.0"]\nno_good = "x"\n'
    reproduce += 'must_fail = ["runs"]\n'
    head = manifest.split("[reproduce]")[0]
    (folder / "case.toml").write_text(head + reproduce + 'fails_with = "^WRONG_RESULT"\n')
    check = judge_bad(load_case(folder / "case.toml"), observation, "triton==3.0.0", "cpu:interpreter")
    assert not check.ok
    said = "failed otherwise than the bug (/^WRONG_RESULT/): runs[cpu:interpreter]: RUNTIME_ERROR"
    assert said in check.why
    (folder / "case.toml").write_text(head + reproduce + 'fails_with = "AssertionError: triton.language"\n')
    assert judge_bad(load_case(folder / "case.toml"), observation, "triton==3.0.0", "cpu:interpreter").ok


def test_a_proof_resting_on_the_failures_message_reads_the_same_from_the_ledger() -> None:
    """`fails_with` is held to a compile failure's message, whose configs' errors follow its first
    line: the ledger keeps them, so a clone that reads the proof from it proves what was judged (it
    once kept the first line alone, and a fresh clone's verify said "failed otherwise than the bug")."""
    from kregress.bisect.triage.ledger import LedgerEntry
    from kregress.judging_service import Observation

    corpus = Path(__file__).parent.parent / "corpus"
    case = load_case(corpus / "max_contiguous_descending_hint" / "case.toml")
    bug, control = "compiles-descending-hint[cuda:sm_80]", "compiles-hint-one[cuda:sm_80]"
    said = (
        "known bad (https://github.com/triton-lang/triton/issues/10909: a negative contiguity) — "
        "COMPILE_ERROR: 1 of 1 configs did not compile\n[num_warps=4] RuntimeError: PassManager::run failed"
    )
    judged = Observation.from_parts(
        {bug: "XFAIL", control: "PASS"}, {bug: "COMPILE_ERROR"}, {bug: said, control: "1 config(s) compiled"}
    )
    entry = LedgerEntry.of(CaseRun(corpus, case.id, None, "cuda:sm_80"), "triton==3.5.0", judged)
    fresh = judge_bad(case, judged, "triton==3.5.0", "cuda:sm_80")
    read = judge_bad(case, entry.observation(), "triton==3.5.0", "cuda:sm_80")
    assert fresh.ok and read.ok, (fresh.why, read.why)
    other = Observation.from_parts(
        {bug: "XFAIL", control: "PASS"}, {bug: "COMPILE_ERROR"}, {bug: "no such words"}
    )
    assert not judge_bad(case, other, "triton==3.5.0", "cuda:sm_80").ok  # the check can fail
