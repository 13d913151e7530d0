"""The real SDK in file mode (its defaults, as against an account): flushes over ~1 MiB are
uploaded to the emulator's stage and registered, and every row lands exactly once, through
faults on the upload and on the registration, into the drop sink and into Iceberg; with
the rowset-mode properties the same rows stay inline."""

from __future__ import annotations

import pytest
from emulator_support import make_emulator, run_sdk, sdk_available
from file_mode_support import landed

from elastic_channels.sdk.properties import ROWSET_MODE_PROPERTIES

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")

#: Rows per append: ~2 MB of NDJSON, so each flush is over the SDK's ~1 MiB rowset limit.
CHUNK = 8000


@pytest.fixture(scope="module")
def emu(request, tmp_path_factory):
    """One emulator per configuration (``indirect`` param: land, drop, iceberg), kept for
    the tests of that configuration."""
    kind = getattr(request, "param", "land")
    overrides = {"drop": {"sink": "drop"}, "iceberg": {"table_format": "iceberg"}}
    if kind == "iceberg":
        pytest.importorskip("pyiceberg")
    emulator = make_emulator(tmp_path_factory.mktemp(kind), **overrides.get(kind, {}))
    try:
        yield emulator
    finally:
        emulator.stop()


class Delta:
    """Counters of the emulator's stats, as moved since this was made."""

    def __init__(self, emu) -> None:
        self.emu, self.before = emu, self._read(emu.stats_snapshot())

    @staticmethod
    def _read(snap: dict) -> dict[str, int]:
        out = {k: snap[k] for k in ("file_fragments", "appends_acked", "rows_dropped")}
        out |= {f"stage_{k}": v for k, v in snap["stage"].items()}
        out |= {f"requests:{k}": v for k, v in snap["requests"].items()}
        out |= {f"responses:{k}": v for k, v in snap["responses"].items()}
        out |= {f"fired:{k}": v for k, v in snap["faults_fired"].items()}
        return out

    def __getitem__(self, name: str) -> int:
        now = self._read(self.emu.stats_snapshot())
        return now.get(name, 0) - self.before.get(name, 0)


def _run(emu, tmp_path, run_id: str, appends: int, **extra) -> None:
    """The SDK appends ``appends`` x CHUNK rows of ``run_id``; every future must succeed."""
    scenario = {"run_id": run_id, "rows": appends * CHUNK, "chunk": CHUNK, **extra}
    result = run_sdk(emu, tmp_path, scenario, timeout_s=90)
    assert result["futures"] == ["ok"] * appends, result
    assert not result["handler_errors"] and "flush_error" not in result, result


def test_the_sdk_in_file_mode_lands_every_row_once(emu, tmp_path):
    delta = Delta(emu)
    _run(emu, tmp_path, "file-mode", 3)
    assert landed(emu, "file-mode") == 3 * CHUNK
    # The SDK may merge appends, all three into one flush on a busy box; none went inline.
    assert delta["file_fragments"] >= 1 and delta["appends_acked"] == 0
    assert delta["stage_uploads"] == delta["file_fragments"]


def test_rowset_mode_properties_keep_the_rows_inline(emu, tmp_path):
    delta = Delta(emu)
    _run(emu, tmp_path, "rowset-mode", 2, properties=ROWSET_MODE_PROPERTIES)
    assert landed(emu, "rowset-mode") == 2 * CHUNK
    assert delta["file_fragments"] == 0 and delta["stage_uploads"] == 0
    assert delta["appends_acked"] >= 1


@pytest.mark.parametrize(
    ("endpoint", "seen"),
    [("stage_put", "stage_faults"), ("filebuffer", "responses:filebuffer:503")],
)
def test_a_503_on_the_upload_or_the_registration_is_retried(emu, tmp_path, endpoint, seen):
    run_id = f"503-{endpoint}"
    delta = Delta(emu)
    emu.faults.add(endpoint, "status", status=503, count=1)
    try:
        _run(emu, tmp_path, run_id, 1)
        assert emu.faults.pending() == 0, "the fault fired"
    finally:
        emu.faults.clear()
    assert delta[seen] == 1
    assert landed(emu, run_id) == CHUNK
    assert delta["file_fragments"] == 1


def test_a_lost_registration_ack_is_retried_and_lands_once(emu, tmp_path):
    delta = Delta(emu)
    emu.faults.add("filebuffer", "lose_ack", count=1)
    try:
        _run(emu, tmp_path, "lost-ack", 1)
        assert emu.faults.pending() == 0, "the fault fired"
    finally:
        emu.faults.clear()
    assert delta["fired:filebuffer:lose_ack"] == 1
    assert delta["requests:filebuffer"] >= 2, "the SDK sent the registration again"
    # Inline rows would land twice here (a lost ack on rows is a duplicate); a fragment
    # is known by its file, so the retry is acked without landing it again.
    assert landed(emu, "lost-ack") == CHUNK
    assert delta["file_fragments"] == 1


@pytest.mark.parametrize("emu", ["drop"], indirect=True)
def test_the_drop_sink_counts_file_mode_rows_as_dropped(emu, tmp_path):
    delta = Delta(emu)
    _run(emu, tmp_path, "dropped", 2)
    assert delta["file_fragments"] >= 1 and delta["appends_acked"] == 0
    assert delta["rows_dropped"] == 2 * CHUNK
    assert emu.query("SELECT count(*) FROM RESORT_SALES") == [(0,)]


@pytest.mark.parametrize("emu", ["iceberg"], indirect=True)
def test_file_mode_rows_land_in_iceberg(emu, tmp_path):
    delta = Delta(emu)
    _run(emu, tmp_path, "iceberg", 2)
    assert landed(emu, "iceberg") == 2 * CHUNK
    assert delta["file_fragments"] >= 1 and delta["appends_acked"] == 0
    assert emu.stats_snapshot()["iceberg"]["total_records"] == 2 * CHUNK  # this module's only
