-- wallet_days(w, c, h, r): the daily sums of wallet w on chain c ('' for every chain),
-- from onchain_wallet_days over the segments' dates and summed from the per-date legs
-- after r: one row per (chain, token, day of block time, partition date).
CREATE OR REPLACE MACRO wallet_days(w, c, h, r) AS TABLE
SELECT chain, token, day, inflow, outflow, tx_count, first_time, last_time
FROM onchain_wallet_days
WHERE bucket = substr(w, 3, 1) AND segment = 'history' AND wallet = w AND (c = '' OR chain = c)
  AND date <= CAST(h AS DATE)
UNION ALL
SELECT chain, token, day, inflow, outflow, tx_count, first_time, last_time
FROM onchain_wallet_days
WHERE bucket = substr(w, 3, 1) AND segment = 'recent' AND wallet = w AND (c = '' OR chain = c)
  AND date > CAST(h AS DATE) AND date <= CAST(r AS DATE)
UNION ALL
SELECT chain, token, CAST(block_time AS DATE) AS day,
       sum(usd) FILTER (WHERE dir = 1), sum(usd) FILTER (WHERE dir = -1),
       count(*) FILTER (WHERE NOT (self AND dir = -1)), min(block_time), max(block_time)
FROM onchain_legs
WHERE wallet = w AND (c = '' OR chain = c) AND date > CAST(r AS DATE)
GROUP BY chain, token, day, date
