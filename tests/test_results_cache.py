"""The main job's text kept in the user's cache folder (cli/results_cache.py): used
only where it is the user's, private, and carries this installation's fingerprint."""

import os
import stat

import pytest

from roofline_sym.cli import cmd_default, main, results_cache


@pytest.fixture
def results(tmp_path, monkeypatch):
    """An empty cache directory; the folder the main job's entry goes to."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "roofline_sym" / results_cache.FOLDER


def _main_job(capsys):
    assert main([]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def _computing(monkeypatch, text):
    """cmd_default.text replaced by one that returns ``text`` and counts its calls."""
    calls = []
    monkeypatch.setattr(cmd_default, "text", lambda: calls.append(1) or text)
    return calls


def test_a_second_run_prints_the_stored_text_which_is_a_fresh_computation(results, capsys,
                                                                          monkeypatch):
    first = _main_job(capsys)
    entry = results / "main_job.txt"
    assert stat.S_IMODE(os.stat(results).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(entry).st_mode) == 0o600
    assert entry.read_text().splitlines()[0] == results_cache.fingerprint("main_job")
    assert first == cmd_default.text()  # computed again, no cache
    calls = _computing(monkeypatch, "recomputed\n")
    assert _main_job(capsys) == first and not calls  # read, not computed


@pytest.mark.parametrize("plant", ["stale", "foreign", "open to others", "link", "folder",
                                   "not utf-8"])
def test_a_planted_entry_is_not_used(results, capsys, monkeypatch, tmp_path, plant):
    key = results_cache.fingerprint("main_job")
    results.mkdir(parents=True)
    os.chmod(results.parent, 0o700)
    os.chmod(results, 0o700)
    entry = results / "main_job.txt"
    if plant == "stale":  # another installation's (another version, other files)
        entry.write_text("0" * 64 + "\nplanted\n")
    elif plant == "foreign":  # no fingerprint line
        entry.write_text("planted\n")
    elif plant == "open to others":  # the right fingerprint, a file others may write
        entry.write_text(f"{key}\nplanted\n")
        os.chmod(entry, 0o666)
    elif plant == "link":  # the right fingerprint, in a file the entry links to
        elsewhere = tmp_path / "elsewhere.txt"
        elsewhere.write_text(f"{key}\nplanted\n")
        os.chmod(elsewhere, 0o600)
        entry.symlink_to(elsewhere)
    elif plant == "folder":
        entry.mkdir()
    else:
        entry.write_bytes(key.encode() + b"\n\xff\xfe planted\n")
    if entry.is_file() and not entry.is_symlink() and plant != "open to others":
        os.chmod(entry, 0o600)
    calls = _computing(monkeypatch, "computed\n")
    assert _main_job(capsys) == "computed\n" and len(calls) == 1
    if plant != "folder":  # replaced by the computed text, a file of the user's
        assert entry.read_text() == f"{key}\ncomputed\n" and not entry.is_symlink()
        assert stat.S_IMODE(os.stat(entry).st_mode) == 0o600
    assert _main_job(capsys) == "computed\n"


def test_a_cache_folder_others_can_write_is_not_used(results, capsys, monkeypatch):
    results.mkdir(parents=True, mode=0o700)
    os.chmod(results.parent, 0o700)
    os.chmod(results, 0o777)
    (results / "main_job.txt").write_text(f"{results_cache.fingerprint('main_job')}\nplanted\n")
    os.chmod(results / "main_job.txt", 0o600)
    calls = _computing(monkeypatch, "computed\n")
    assert _main_job(capsys) == "computed\n" and _main_job(capsys) == "computed\n"
    assert len(calls) == 2


def test_the_fingerprint_changes_with_every_file_of_the_package(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "data" / "gpus.toml").write_text("bw = 3.35e12\n")
    before = results_cache.package_digest(tmp_path)
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"bytecode")
    assert results_cache.package_digest(tmp_path) == before  # bytecode is not read
    for change in (lambda: (tmp_path / "data" / "gpus.toml").write_text("bw = 3.36e12\n"),
                   lambda: (tmp_path / "b.py").write_text(""),
                   lambda: (tmp_path / "a.py").rename(tmp_path / "c.py")):
        change()
        results_cache._digest.cache_clear()
        after = results_cache.package_digest(tmp_path)
        assert after != before
        before = after


def test_an_entry_name_is_a_plain_word():
    with pytest.raises(ValueError, match="lower-case"):
        results_cache.cached_text("../main_job", lambda: "")
