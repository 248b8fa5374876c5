"""List commands' output (mutants, probes, scenarios, properties, findings) at any terminal width with every name
whole: the names in them are exactly what a user types next.

rich shrinks a table that does not fit by cutting its widest cells ("commit-in-comple…"), names included. Here
the widths are decided before rich sees the table: a *whole* column (names, paths) is as wide as its longest
word, and the other columns share the rest. When that leaves them too narrow to read, each row is printed as a
record instead — its name on a line of its own, then one line per field, wrapped between words only (a name or
path longer than the line runs past the edge rather than being split).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

MIN_OTHER = 16     # below this a prose column is unreadable: records instead of a table
LONG_WORD = 24     # a prose column is given room for its longest word up to this (a longer one may fold)
INDENT = "    "


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    whole: bool = False     # names and paths: never broken inside a word


def _plain(cell: str) -> str:
    return Text.from_markup(cell).plain


def _widths(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> list[int] | None:
    """Content widths of a table that fits in ``width`` with every whole column's words whole, or None."""
    n = len(columns)
    natural = [max([cell_len(c.header)] + [cell_len(line) for r in rows for line in _plain(r[i]).splitlines()])
               for i, c in enumerate(columns)]
    longest_word = [max([cell_len(w) for r in rows for w in _plain(r[i]).split()] + [cell_len(c.header)])
                    for i, c in enumerate(columns)]
    room = width - 3 * n - 1                      # rich: one space of padding each side, a border between
    fixed = {i: longest_word[i] for i, c in enumerate(columns) if c.whole}
    others = [i for i in range(n) if i not in fixed]
    left = room - sum(fixed.values())
    if sum(natural) <= room:
        return natural
    # a prose column needs its longest word (up to LONG_WORD) and at least MIN_OTHER; what is left over goes to
    # the columns in proportion to what they lack of their natural width
    need = {i: min(natural[i], max(MIN_OTHER, min(longest_word[i], LONG_WORD))) for i in others}
    if not others or sum(need.values()) > left:
        return None
    out = [fixed.get(i, need.get(i, 0)) for i in range(n)]
    spare, lack = left - sum(need.values()), {i: natural[i] - need[i] for i in others}
    total_lack = sum(lack.values())
    for i in others:
        out[i] += min(lack[i], spare * lack[i] // total_lack) if total_lack else 0
    return out


def print_listing(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[str]],
                  title: str | None = None) -> None:
    """``rows`` (cells may carry rich markup) as a table when one fits the console, else as records."""
    widths = _widths(columns, rows, console.width)
    if widths is not None:
        table = Table(header_style="bold", title=title, title_justify="left")
        for column, w in zip(columns, widths, strict=True):
            table.add_column(column.header, width=w, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return
    if title:
        console.print(Text(title, style="italic"), soft_wrap=True)
    for k, row in enumerate(rows):
        if k:
            console.print()
        console.print(Text(_plain(row[0]), style="bold"), soft_wrap=True)
        for column, cell in zip(columns[1:], row[1:], strict=True):
            for line in _plain(cell).splitlines() or [""]:
                console.print(_fill(f"{INDENT}{column.header}: ", line, console.width), soft_wrap=True,
                              markup=False, highlight=False)


def _fill(head: str, text: str, width: int) -> str:
    """``head`` + ``text`` wrapped between words to ``width`` terminal cells (a CJK character takes two; a run of
    them has no spaces, so it may break between characters — an ASCII word, a name or a path, never breaks)."""
    lines, line = [], head
    for word in text.split():
        for piece in _pieces(word, width - cell_len(INDENT * 2)):
            fresh = INDENT * 2 + piece
            if line == head and (cell_len(line + piece) <= width or cell_len(fresh) > width):
                line += piece                       # on the field's own line, even past the edge if it fits nowhere
            elif line != head and cell_len(line) + 1 + cell_len(piece) <= width:
                line += " " + piece
            else:
                lines.append(line.rstrip())
                line = fresh
    lines.append(line.rstrip())
    return "\n".join(lines)


def _pieces(word: str, room: int) -> list[str]:
    if cell_len(word) <= room or word.isascii():
        return [word]
    out, piece = [], ""
    for char in word:
        if cell_len(piece + char) > room:
            out.append(piece)
            piece = ""
        piece += char
    return out + [piece]


__all__ = ["Column", "print_listing"]
