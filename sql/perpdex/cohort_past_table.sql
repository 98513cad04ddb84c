-- perpdex_cohorts_past_mem holds today's labels computed on demand for a clock behind
-- the lake's publication (a store whose clock is set back, a request's as_of): the rows
-- perpdex_cohorts_current would hold had it been published from the snapshot
-- computed_at. Store-local, in memory; rows of a few snapshots at most.
CREATE TABLE IF NOT EXISTS perpdex_cohorts_past_mem (
    wallet VARCHAR, size_cohort VARCHAR, pnl_cohort VARCHAR, pnl_cohort_tag VARCHAR,
    style_cohort_tag VARCHAR, computed_at TIMESTAMP
);
