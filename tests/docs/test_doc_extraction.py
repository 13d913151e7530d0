"""How tests/docs reads a document and checks a quoted command's flags (doc_commands)."""

from __future__ import annotations

from pathlib import Path

from doc_commands import every_command, steps, unknown_flags

DOC = """# Title

```bash
elastic-channels run --workers 1 \\
    --duration-seconds 20   # a comment
# a whole comment line
pip install . && elastic-channels bench
```

```console
aws eks describe-cluster --name never-a-step
```

| what | command |
|---|---|
| a figure | `python benches/bench_encoders.py --repeats 31` |
| not a command | `RESORT_SALES` |

In a sentence, `elastic-channels setup --sql-file
FILE` wraps over a line, and `deploy/` is a folder.

```python
print("snippet")
```
"""


def test_steps_come_in_document_order(tmp_path: Path) -> None:
    doc = tmp_path / "DOC.md"
    doc.write_text(DOC)
    got = [(s.line, s.kind, s.text) for s in steps(doc)]
    assert got == [
        (4, "command", "elastic-channels run --workers 1 --duration-seconds 20"),
        (7, "command", "pip install ."),
        (7, "command", "elastic-channels bench"),
        (16, "command", "python benches/bench_encoders.py --repeats 31"),
        (23, "python", 'print("snippet")\n'),
    ]


def test_sentences_quote_commands_that_are_checked_not_run(tmp_path: Path) -> None:
    doc = tmp_path / "DOC.md"
    doc.write_text(DOC)
    quoted = every_command(doc)
    assert (19, "elastic-channels setup --sql-file FILE") in quoted
    assert all("never-a-step" not in c and c != "RESORT_SALES" for _, c in quoted)
    assert len(quoted) == 5


def test_a_renamed_or_missing_flag_is_found() -> None:
    assert unknown_flags("elastic-channels setup --sql-file FILE --print") == []
    assert unknown_flags("elastic-channels emulator faults add --help") == []
    assert unknown_flags("elastic-channels run --duration 5 --workers 1") == ["--duration"]
    assert unknown_flags("python benches/bench_encoders.py --repeat 3") == ["--repeat"]
    assert unknown_flags("python -m elastic_channels.emulator serve --no-such-flag") == [
        "--no-such-flag"
    ]
    # Each flag against the help of the level it is given at (nested subcommands).
    faults = "elastic-channels emulator faults --data-dir D add rows 503 --probability 0.5"
    assert unknown_flags(faults) == []
    assert unknown_flags(faults.replace("add rows", "--probability 0.5 add rows")) == [
        "--probability"
    ]
    # A tool whose usage is not argparse's: its subcommand found by its own --help.
    assert unknown_flags("pip download --no-deps --dest D pkg==1") == []
    assert unknown_flags("pip download --no-such-flag pkg==1") == ["--no-such-flag"]
    assert unknown_flags("cargo bench --bench row_writer") == []
    assert unknown_flags("cargo bench --bench no_such_bench") == ["--bench no_such_bench"]
