"""Make what a submission controls safe to print, and every JSON document the grader writes strict.

A submission controls its exception messages, the source lines quoted from it and its file name.
Everything the grader prints passes through ``clean_text``: terminal escape sequences and control
characters are removed (newlines and tabs stay), lone surrogates become U+FFFD, and the length is
capped. Every JSON document passes through ``dumps``: strings cleaned the same way, and a
non-finite float written as the string "NaN", "Infinity" or "-Infinity" (docs/json.md), so the
output parses under the strictest JSON parser.
"""

from __future__ import annotations

import json
import math
import numbers
import re

MESSAGE_LIMIT = 2000  # characters; a compiler error quoting source fits, a flood of text does not
CUT = " ... (cut)"

# Escape sequences: CSI (colours, cursor moves), OSC/DCS/APC/PM/SOS strings (window titles,
# hyperlinks) and the two-character ones. Whatever escape is left over loses its ESC below.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# C0 and C1 controls except tab and newline (a carriage return rewrites the line it is on), and the
# bidirectional overrides and isolates that make a terminal show text in another order than it is.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile("[\ud800-\udfff]")  # not encodable: printing one raises UnicodeEncodeError

NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}  # as float() and JavaScript read them


def clean_text(text: str, limit: int | None = MESSAGE_LIMIT) -> str:
    """`text` without escapes, controls or surrogates, and at most `limit` characters (plus CUT)."""
    text = _SURROGATES.sub("\ufffd", text)
    text = _CONTROLS.sub("", _ESCAPES.sub("", text))
    if limit is not None and len(text) > limit:
        text = text[:limit] + CUT
    return text


def one_line(text: str) -> str:
    """A name (a file's) with every control character (a newline, an escape) shown as '?': it stays one line
    and cannot forge the report around it."""
    return "".join("?" if ord(c) < 32 or ord(c) == 127 else c for c in text)


def jsonable(value):
    """`value` (dicts, lists, strings, numbers) with every string cleaned and every number a finite JSON number
    or one of the NON_FINITE strings."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, numbers.Integral):  # numpy integers too
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        return number if math.isfinite(number) else NON_FINITE[repr(number)]
    if isinstance(value, dict):
        return {clean_text(str(key)): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return clean_text(str(value))


def dumps(document, **options) -> str:
    """Strict JSON for `document`: parses without NaN or Infinity tokens, and prints on any terminal."""
    return json.dumps(jsonable(document), allow_nan=False, **options)
