"""Lines out of a stream read in chunks (a pod's log, a file, stdin): under a length cap,
in time linear in the bytes.

Each chunk is searched for newlines once, from where the last search ended, and only
the unfinished line's bytes are kept. A line that grows past ``max_bytes`` without a
newline is cut: its first ``max_bytes + 1`` bytes are handed on (the monitor then skips
it as a line over the cap and counts it as bad), the rest of it is passed over without
being kept, and the splitter picks up again after the next newline.
"""

from __future__ import annotations

from .records import MAX_LINE_BYTES

__all__ = ["LineSplitter"]


class LineSplitter:
    def __init__(self, max_bytes: int = MAX_LINE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._line = bytearray()
        self._skipping = False  # inside a line already cut: until its newline
        #: Lines cut at the cap.
        self.cut_lines = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completes (without their newlines), and any cut one."""
        out: list[bytes] = []
        at = 0
        while at < len(chunk):
            nl = chunk.find(b"\n", at)
            stop = len(chunk) if nl < 0 else nl
            if not self._skipping:
                room = self.max_bytes + 1 - len(self._line)
                self._line += chunk[at : min(stop, at + room)]
                if stop - at >= room:  # past the cap: hand on its head, pass the rest
                    out.append(bytes(self._line))
                    self._line.clear()
                    self._skipping = True
                    self.cut_lines += 1
            if nl < 0:
                break
            if not self._skipping:
                out.append(bytes(self._line))
            self._line.clear()
            self._skipping = False
            at = nl + 1
        return out

    def end(self) -> list[bytes]:
        """The last line, if the stream ended without its newline."""
        line, self._line = bytes(self._line), bytearray()
        skipped, self._skipping = self._skipping, False
        return [line] if line and not skipped else []
