"""The served app: the Streamlit app (``app.py``) behind :class:`~.loopback.LoopbackOnly`.

``elastic-channels dashboard`` runs ``streamlit run`` on this file; Streamlit sees the
``st.App`` below and serves it with uvicorn (Streamlit >= 1.5x's ASGI mode), so the
middleware sees every request before Streamlit does.
"""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from elastic_channels.dashboard.loopback import LoopbackOnly

app = st.App(str(Path(__file__).resolve().parent / "app.py"), middleware=[Middleware(LoopbackOnly)])
