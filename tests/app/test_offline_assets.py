"""Issue 44, item 8: the browser fetched icons from a font CDN (offline shops saw errors). Streamlit draws a page's
``:material/…:`` icon in the browser tab from fonts.gstatic.com unless ``st.set_page_config`` names a page icon
first; the dashboard names an emoji (drawn as an inline SVG), and its own code links to nothing outside."""
from __future__ import annotations

import re
from pathlib import Path

from streamlit.commands.page_config import _get_favicon_string

from fairaudit.ui import widgets

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "fairaudit" / "ui").glob("*.py")),
           *sorted((ROOT / "fairaudit" / "viz").glob("*.py")), ROOT / ".streamlit" / "config.toml"]
EXTERNAL = re.compile(r"""(?:https?:)?//(?:fonts\.googleapis|fonts\.gstatic|cdn\.|cdnjs|unpkg|use\.fontawesome)"""
                      r"""|<link[^>]+href=["']https?:|@import\s+url\(["']?https?:""", re.I)


def test_the_tab_icon_is_drawn_locally():
    favicon = _get_favicon_string(widgets.PAGE_ICON)
    assert favicon.startswith("emoji:"), favicon  # an inline SVG, not a URL


def test_every_page_config_names_the_local_icon():
    calls = [(path, line) for path in SOURCES if path.suffix == ".py"
             for line in path.read_text(encoding="utf-8").splitlines() if "st.set_page_config(" in line]
    assert calls, "no st.set_page_config call found"
    for path, line in calls:
        assert "page_icon=PAGE_ICON" in line, (path.name, line)


def test_the_app_loads_nothing_from_a_cdn():
    for path in SOURCES:
        found = EXTERNAL.findall(path.read_text(encoding="utf-8"))
        assert not found, (path.name, found)
