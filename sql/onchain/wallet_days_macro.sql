-- wallet_days(w, c, h, r, segs, today): the daily sums of wallet w on chain c ('' for
-- every chain), from onchain_wallet_days over the segments' dates and summed from the
-- per-date legs after r: one row per (chain, token, day of block time, partition date).
-- segs are w's bucket's onchain_wallet_days segment files and today the per-date legs
-- files dated after r, listed by the caller as for wallet_legs.
CREATE OR REPLACE MACRO wallet_days(w, c, h, r, segs, today) AS TABLE
SELECT chain, token, day, inflow, outflow, tx_count, first_time, last_time
FROM read_parquet(segs, hive_partitioning = true, hive_types = {'chain': VARCHAR, 'bucket': VARCHAR, 'segment': VARCHAR})
WHERE wallet = w AND (c = '' OR chain = c)
  AND ((segment = 'history' AND date <= CAST(h AS DATE))
       OR (segment = 'recent' AND date > CAST(h AS DATE) AND date <= CAST(r AS DATE)))
UNION ALL
SELECT chain, token, CAST(block_time AS DATE) AS day,
       sum(usd) FILTER (WHERE dir = 1), sum(usd) FILTER (WHERE dir = -1),
       count(*) FILTER (WHERE NOT (self AND dir = -1)), min(block_time), max(block_time)
FROM read_parquet(today, hive_partitioning = true, hive_types = {'chain': VARCHAR, 'date': DATE})
WHERE wallet = w AND (c = '' OR chain = c) AND date > CAST(r AS DATE)
GROUP BY chain, token, day, date
