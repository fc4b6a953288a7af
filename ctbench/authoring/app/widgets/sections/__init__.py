"""The editor's sections, one per part of a task an author works on."""
