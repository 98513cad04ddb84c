-- PerpdexFundingDaily: one funding date's per-wallet sum for the perpetuals boards'
-- funding paid (lake perpdex_funding_daily). $1 the date. Exact decimal sums, as
-- sql/perpdex/fills_daily.sql.
SELECT wallet,
       CAST(time AS DATE)                     AS day,
       sum(CAST(usdc AS DECIMAL(38, 10)))     AS usdc_x
FROM perpdex_funding
WHERE date = $1::DATE
GROUP BY wallet, day
