"""TTAC Track B interoperability: its phase layout, its API, its strict command whitelist.

Track B of the Telco Troubleshooting Agentic Challenge (docs/trackb.md) keeps each phase as a
``test.json`` of questions, a ``question_limits_config.json`` of refused commands and a folder of
device outputs named ``safe(command).txt``; its agents speak ``POST /api/agent/execute``. This
package holds what ctbench needs to know about that layout (:mod:`.layout`), the whitelist its
reference server applies (:mod:`.whitelist`, a data file) and the HTTP facade that serves Track B
agents from ctbench's replay engine (:mod:`.facade`). The importer (``ctb-author import-trackb``) and
the exports (``ctb-eval export --format trackb``) build on :mod:`.layout`.
"""
