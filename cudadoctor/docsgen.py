"""Write docs/codes/<code>.md for every built-in code: `python -m cudadoctor.docsgen docs/codes`.

The pages are generated from the explanations that live next to each check, so docs and
`cudadoctor explain` cannot drift apart; tests/test_docs.py fails when a page is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict

from . import registry
from .render.catalogue import explain_markdown


def pages() -> Dict[str, str]:
    reg = registry.load(plugins=False)
    builtin = {name: code for name, (code, source) in reg.codes.items() if source.startswith("cudadoctor:")}
    out = {name: explain_markdown(code) for name, code in builtin.items()}
    index = [
        "# Finding codes",
        "",
        "Every code cudadoctor reports. Codes are stable: never renamed, never reused.",
        "",
        "| code | severity | area | title |",
        "|---|---|---|---|",
    ]
    for name in sorted(builtin):
        c = builtin[name]
        index.append(f"| [`{name}`]({name}.md) | {c.severity} | {c.area} | {c.title} |")
    out["README"] = "\n".join(index) + "\n"
    return out


def main(argv=None) -> int:
    target = Path((argv or sys.argv[1:] or ["docs/codes"])[0])
    target.mkdir(parents=True, exist_ok=True)
    want = pages()
    for stale in target.glob("*.md"):
        if stale.stem not in want:
            stale.unlink()
    for name, text in want.items():
        (target / f"{name}.md").write_text(text)
    print(f"wrote {len(want)} pages to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
