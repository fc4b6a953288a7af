"""Vendor command trees (``<os>.yaml``), shipped as package data; see ``README.md`` here."""
