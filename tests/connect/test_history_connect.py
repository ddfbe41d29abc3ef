"""tests/test_history.py on a Spark Connect session: the history read through SQL
(`BloomIndex.history()` sends `SELECT * FROM bloom_index_history()`). Delta is not on this
suite's server."""

from test_history import (  # noqa: F401 - the same tests, this directory's `spark`
    test_bounded_in_entries_and_age,
    test_disabled_records_nothing,
    test_history_name_is_reserved,
    test_v1_scans_recorded_with_and_without_an_index,
    test_v2_file_scans_recorded,
)
