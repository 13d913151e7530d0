"""The Streamlit entry point: ``streamlit run app.py`` (``elastic-channels dashboard``)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

PAGES = Path(__file__).resolve().parent / "pages"

st.set_page_config(page_title="Elastic channels", layout="wide")
st.navigation(
    [
        st.Page(PAGES / "sales.py", title="Resort sales", default=True),
        st.Page(PAGES / "run.py", title="Run"),
    ]
).run()
