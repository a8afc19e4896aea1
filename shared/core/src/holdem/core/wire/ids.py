"""The alphabet of every id on the wire (player, round, command, table, brand): one pattern, used
by the contracts' ``Id`` type and by the checks that run before a model is built.

>>> bool(ID.fullmatch("alice@eu-1")), bool(ID.fullmatch("a b")), bool(ID.fullmatch("x" * 65))
(True, False, False)
"""

from __future__ import annotations

import re

ID_ALPHABET = r"[A-Za-z0-9._:@-]"
ID_MAX_LENGTH = 64
ID = re.compile(rf"{ID_ALPHABET}{{1,{ID_MAX_LENGTH}}}")
