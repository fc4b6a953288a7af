"""Widgets of the authoring app: the task table, the validation panel and the editor sections."""
