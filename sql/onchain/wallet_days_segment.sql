-- PublishOnchainLegs: one segment of onchain_wallet_days, the daily sums of the legs of
-- one chain and one wallet bucket over a range of partition dates (the same legs as the
-- onchain_wallet_legs segment beside it). $1 chain, $2 first date (exclusive), $3 last
-- date (inclusive), $4 and $5 the bucket's wallet range [lo, hi).
SELECT wallet, token, CAST(block_time AS DATE) AS day, date,
       sum(usd) FILTER (WHERE dir = 1) AS inflow, sum(usd) FILTER (WHERE dir = -1) AS outflow,
       count(*) FILTER (WHERE NOT (self AND dir = -1)) AS tx_count,
       min(block_time) AS first_time, max(block_time) AS last_time,
       -- the token amounts, for the hourly boards that read the days (discover_bands.sql,
       -- smart_cohort_bands.sql, token_holders_bands.sql): all legs, priced legs only,
       -- and whether every leg was priced
       sum(amount) FILTER (WHERE dir = 1) AS amount_in, sum(amount) FILTER (WHERE dir = -1) AS amount_out,
       sum(amount) FILTER (WHERE dir = 1 AND priced) AS amount_in_p,
       sum(amount) FILTER (WHERE dir = -1 AND priced) AS amount_out_p,
       bool_and(priced) AS priced
FROM onchain_legs
WHERE chain = $1 AND date > CAST($2 AS DATE) AND date <= CAST($3 AS DATE)
  AND wallet >= $4 AND wallet < $5
GROUP BY wallet, token, day, date
