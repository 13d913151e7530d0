"""Page "Latest rows" (a Streamlit page script): any workload but resort sales."""

from elastic_channels.dashboard.rows_page import main

main()
