"""tests/test_fpp_auto.py on a Spark Connect session: `fpp = 'auto'` through SQL and
`BloomIndex.create(..., fpp="auto")` (which sends the SQL statement), DESCRIBE, REFRESH, errors."""

from test_fpp_auto import (  # noqa: F401 - the same tests, this directory's `spark`
    test_auto_is_chosen_shown_and_kept_through_refresh,
    test_auto_is_the_default_of_new_indexes_and_index_wide,
    test_bad_fpp_values_are_refused,
)
