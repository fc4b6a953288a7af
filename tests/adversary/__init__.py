"""The adversarial agent of the sandbox tests (``agent.py``, run by ``--agent command``)."""
