"""Page "Resort sales" (a Streamlit page script)."""

from elastic_channels.dashboard.sales_page import main

main()
