# mypy: ignore-errors
collect_ignore_glob = ["test_*.py"]
