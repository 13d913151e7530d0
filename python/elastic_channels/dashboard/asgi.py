"""The served app: the Streamlit app (``app.py``) behind :class:`~.loopback.LoopbackOnly`.

``elastic-channels dashboard`` runs ``streamlit run`` on this file; Streamlit sees the
``App`` below (``streamlit.starlette.App``, Streamlit >= 1.53) and serves it with
uvicorn, so the middleware sees every request before Streamlit does.
"""

from pathlib import Path

from starlette.middleware import Middleware
from streamlit.starlette import App

from elastic_channels.dashboard.loopback import LoopbackOnly

app = App(str(Path(__file__).resolve().parent / "app.py"), middleware=[Middleware(LoopbackOnly)])
