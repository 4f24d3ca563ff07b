"""tests/windows-lane.txt, what the Windows lane runs: each line names a test file that exists
(or one of its tests, ``file::test``), once, and every test file of the suite is either in it or
named under "Left out" with a reason, so a new file (a tests/test_win_*.py above all) is never
silently left out of the lane."""
from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
LIST = TESTS / "windows-lane.txt"


def _read() -> tuple[list[str], set[str]]:
    listed, left_out = [], set()
    for line in LIST.read_text(encoding="utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            listed.append(entry)
        m = re.match(r"#\s+(test_\w+\.py)\s+\S", line)
        if m:
            left_out.add(m.group(1))
    return listed, left_out


def test_every_listed_file_exists_once():
    listed, _ = _read()
    assert listed, "the lane would run nothing"
    assert len(listed) == len(set(listed)), sorted({x for x in listed if listed.count(x) > 1})
    files = [x.split("::", 1)[0] for x in listed]
    missing = [x for x in files if not (REPO / x).is_file() or not Path(x).name.startswith("test_")]
    assert not missing, f"not test files of this checkout: {missing}"
    for x in listed:
        if "::" in x:  # the test is defined in that file (a parameter in [...] is pytest's to check)
            name = x.split("::", 1)[1].split("[", 1)[0]
            assert f"def {name}(" in (REPO / x.split("::", 1)[0]).read_text(encoding="utf-8"), x
    whole = {x for x in listed if "::" not in x}
    assert not {x.split("::", 1)[0] for x in listed if "::" in x} & whole, "a file listed whole and in part"


def test_every_test_file_is_listed_or_left_out_with_a_reason():
    listed, left_out = _read()
    listed = [x.split("::", 1)[0] for x in listed]
    undecided = sorted(p.relative_to(REPO).as_posix() for p in TESTS.rglob("test_*.py")
                       if p.relative_to(REPO).as_posix() not in listed and p.name not in left_out)
    assert not undecided, (f"add these to tests/windows-lane.txt, or name them under 'Left out' with the "
                           f"reason: {undecided}")
    windows_only = [p.relative_to(REPO).as_posix() for p in TESTS.rglob("test_win*.py")]
    assert set(windows_only) <= set(listed) and "tests/test_runner_windows.py" in listed
