-- PerpdexCohortThirdFill rebuilds perpdex_cohort_third_fill: the time of each wallet's
-- third fill (ties counted), for wallets with at least three. A wallet has fewer than
-- three fills before an instant T exactly when it has no row here or third_ts >= T.
CREATE OR REPLACE TABLE perpdex_cohort_third_fill AS
SELECT wallet, list_sort(min(time, 3))[3] AS third_ts
FROM perpdex_fills
GROUP BY wallet
HAVING count(*) >= 3;
