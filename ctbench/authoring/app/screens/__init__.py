"""Full screens of the authoring app: the task list and the task editor."""
