"""The manifest of the certified parts: it holds on the installed core and catches a change."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from holdem.core import manifest


def copy_of_the_core(tmp_path: Path) -> Path:
    root = tmp_path / "core"
    for name in manifest.CERTIFIED:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(manifest.ROOT / name, root / name)
    return root


def test_the_installed_core_matches_its_own_manifest() -> None:
    data = manifest.build()
    assert manifest.verify(data) == []
    assert manifest.digest(data) == manifest.installed_digest()
    assert [p["path"] for p in data["parts"]] == list(manifest.CERTIFIED)  # type: ignore[attr-defined]


def test_a_changed_byte_in_a_certified_file_is_a_mismatch(tmp_path: Path) -> None:
    data = manifest.build()
    root = copy_of_the_core(tmp_path)
    assert manifest.verify(data, root) == []
    rules = root / "rules.py"
    rules.write_bytes(rules.read_bytes().replace(b"25", b"26", 1))
    (root / "data" / "optimal-v1-standard-1.bin").unlink()
    found = {m.path: m.found for m in manifest.verify(data, root)}
    assert set(found) == {"rules.py", "data/optimal-v1-standard-1.bin"}
    assert found["data/optimal-v1-standard-1.bin"] == "missing"
    assert manifest.digest(manifest.build(copy_of_the_core(tmp_path / "again"))) == (
        manifest.digest(data)
    )


def test_a_manifest_that_leaves_a_part_out_does_not_hold() -> None:
    data = manifest.build()
    parts = [p for p in data["parts"] if p["path"] != "deck.py"]  # type: ignore[attr-defined]
    mismatches = manifest.verify({**data, "parts": parts})
    assert [(m.path, m.expected) for m in mismatches] == [("deck.py", "not in the manifest")]


def test_the_digest_is_of_paths_and_hashes_only() -> None:
    data = manifest.build()
    reworded = {**data, "version": "9.9.9", "parts": [
        {**p, "decides": "other words"} for p in data["parts"]  # type: ignore[attr-defined]
    ]}  # fmt: skip
    assert manifest.digest(reworded) == manifest.digest(data)
    changed = {**data, "parts": [{**p, "sha256": "0" * 64} for p in data["parts"]]}  # type: ignore[attr-defined]
    assert manifest.digest(changed) != manifest.digest(data)


def test_verify_runs_on_the_core_alone_as_in_a_service_image(tmp_path: Path) -> None:
    """Service images have holdem-core and no holdem-math: verify must not import it."""
    (tmp_path / "m.json").write_text(json.dumps(manifest.build()))
    code = (
        "import sys; from holdem.core.cli import main; "
        f"rc = main(['certify', 'verify', {str(tmp_path / 'm.json')!r}]); "
        "print(rc, any(m.startswith('holdem.math') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 False"
    (tmp_path / "list.json").write_text("[1, 2]")
    assert manifest.certify_main(["verify", str(tmp_path / "list.json")]) == 2
