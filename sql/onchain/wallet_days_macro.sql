-- wallet_seg_days(w, c, h, r, segs): the daily sums of wallet w on chain c ('' for every
-- chain) from onchain_wallet_days over the segments' dates (up to r): one row per
-- (chain, token, day of block time, partition date). segs are w's bucket's
-- onchain_wallet_days segment files, listed by the caller as for wallet_legs. The dates
-- after r are not summed: the callers read their legs (wallet_today_legs) whole.
CREATE OR REPLACE MACRO wallet_seg_days(w, c, h, r, segs) AS TABLE
SELECT chain, token, day, inflow, outflow, tx_count, first_time, last_time
FROM read_parquet(segs, hive_partitioning = true, hive_types = {'chain': VARCHAR, 'bucket': VARCHAR, 'segment': VARCHAR})
WHERE wallet = w AND (c = '' OR chain = c)
  AND ((segment = 'history' AND date <= CAST(h AS DATE))
       OR (segment = 'recent' AND date > CAST(h AS DATE) AND date <= CAST(r AS DATE)))
