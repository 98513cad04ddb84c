-- perpdex_cohorts_at(s): today's labels as computed from the account snapshot s, from
-- the published perpdex_cohorts_current when it was computed from s, else from the
-- labels computed on demand (perpdex_cohorts_past_mem). s NULL: no labels. Every
-- query that shows today's labels reads them through this macro with the snapshot
-- its clock calls for (query/perpdex_cohorts_at.go), so no label computed from a later
-- snapshot is ever shown.
CREATE OR REPLACE MACRO perpdex_cohorts_at(s) AS TABLE
SELECT wallet, size_cohort, pnl_cohort, pnl_cohort_tag, style_cohort_tag, computed_at
FROM perpdex_cohorts_current WHERE computed_at = s
UNION ALL
SELECT wallet, size_cohort, pnl_cohort, pnl_cohort_tag, style_cohort_tag, computed_at
FROM perpdex_cohorts_past_mem
WHERE computed_at = s AND NOT EXISTS (SELECT 1 FROM perpdex_cohorts_current WHERE computed_at = s);
