"""The Streamlit entry point: ``streamlit run app.py`` (``elastic-channels dashboard``).

The pages follow the workload (``--workload``, :func:`~.common.pages`): "Resort sales"
for resort sales (the default), "Latest rows" for any other; "Run" for every one.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from elastic_channels.dashboard.common import pages

PAGES = Path(__file__).resolve().parent / "pages"

st.set_page_config(page_title="Elastic channels", layout="wide")
shown = [
    st.Page(PAGES / script, title=title, default=i == 0)
    for i, (script, title) in enumerate(pages())
]
st.navigation(shown).run()
