-- PerpdexCohortPublishedAt: the snapshot the published perpdex_cohorts_current was
-- computed from; NULL when none is published.
SELECT max(computed_at) FROM perpdex_cohorts_current;
