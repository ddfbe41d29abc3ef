"""tests/test_advisor.py on a Spark Connect session: `BloomIndex.recommend()` and `what_if()`
send RECOMMEND BLOOM INDEXES and EXPLAIN BLOOM INDEX WHATIF to the server."""

from test_advisor import (  # noqa: F401 - the same tests, this directory's `spark`
    test_a_command_given_as_the_query_is_refused_and_not_run,
    test_bad_input_gets_an_error_condition,
    test_recommend_for_a_query_picks_the_clustered_column,
    test_recommend_from_history_and_the_statement_runs,
    test_what_if_matches_the_built_index,
)
