"""Live labs: real FRR routers and Linux hosts in network namespaces, a fault, every answer recorded.

A lab file (:mod:`.spec`) names routers (FRR configuration in FRR's own syntax), hosts and links.
:mod:`.runtime` brings it up (one set of FRR daemons per namespace, under its own UTS namespace so the
prompt shows the router's name) and always takes it down again; :mod:`.faults` is the catalogue of
faults with the gold each implies; :mod:`.record` runs a command plan on every device and writes a
draft task; :mod:`.vtysh` drives vtysh interactively (``?``, abbreviations) for the FRR dialect's
generator and its tests. Everything needs root and FRR; the functions say what is missing.
"""
