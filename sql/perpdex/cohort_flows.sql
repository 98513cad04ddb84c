-- PerpdexCohortFlows rebuilds perpdex_cohort_flows, the input of the cohort labels:
-- after every instant at which a wallet's ledger moved, its running capital put in
-- (deposits plus sends received) and its running net capital flow in (deposits plus
-- sends received minus withdrawals and sends made), both in integer cents so that
-- band edges compare exactly. Events sharing an instant are summed first. Each row
-- holds for the snapshots in (time, until]: until is the wallet's next ledger instant
-- (infinity after the last), so a snapshot finds the running sums of every event
-- strictly before it with one equality join on the wallet and a range test, which is
-- much cheaper than an as-of join. Other ledger kinds move neither sum.
CREATE OR REPLACE TABLE perpdex_cohort_flows AS
WITH e AS (
    SELECT wallet, time,
           sum(CASE WHEN kind IN ('deposit', 'send_in') THEN c ELSE 0 END) AS cap,
           sum(CASE WHEN kind IN ('deposit', 'send_in') THEN c
                    WHEN kind IN ('withdraw', 'send_out') THEN -c ELSE 0 END) AS net
    FROM (SELECT wallet, time, kind, CAST(round(usdc * 100) AS BIGINT) AS c FROM perpdex_ledger)
    GROUP BY wallet, time
)
SELECT wallet, time,
       coalesce(lead(time) OVER (PARTITION BY wallet ORDER BY time), 'infinity'::TIMESTAMP) AS until,
       CAST(sum(cap) OVER w AS BIGINT) AS capital_cents,
       CAST(sum(net) OVER w AS BIGINT) AS net_in_cents
FROM e
WINDOW w AS (PARTITION BY wallet ORDER BY time ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
ORDER BY wallet, time;
