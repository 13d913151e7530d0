"""Page "Run" (a Streamlit page script)."""

from elastic_channels.dashboard.run_page import main

main()
