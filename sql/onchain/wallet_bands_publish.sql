-- PublishOnchainLegs: one file of onchain_wallet_bands, the daily sums of one chain and
-- one wallet bucket (its onchain_wallet_days segment files, over the dates the split
-- gives each segment, up to the version's newest legs date) summed per (wallet, token,
-- band) over the whole days before the serving date that no summary window starts in. On any clock of the serving date such
-- a day lies in one window band, the same wallet.sql gives it (the narrowest window
-- holding it: 2 = 7d, 3 = 30d, 4 = 90d, 5 = all; no whole day lies in the 24h window).
-- $1 the segment files, $2 the history split, $3 the newest legs date read (at most the
-- recent split; Queries.publishWalletEdges), $4 the serving date.
SELECT wallet, token, band,
       sum(inflow) AS inflow, sum(outflow) AS outflow, sum(tx_count) AS tx_count,
       min(first_time) AS first_time, max(last_time) AS last_time,
       sum(amount_in) AS amount_in, sum(amount_out) AS amount_out,
       sum(amount_in_p) AS amount_in_p, sum(amount_out_p) AS amount_out_p,
       bool_and(priced) AS priced
FROM (
    SELECT *,
           CASE WHEN day > CAST($4 AS DATE) - 7 THEN 2
                WHEN day > CAST($4 AS DATE) - 30 THEN 3
                WHEN day > CAST($4 AS DATE) - 90 THEN 4
                ELSE 5 END AS band
    FROM read_parquet($1, hive_partitioning = true, hive_types = {'chain': VARCHAR, 'bucket': VARCHAR, 'segment': VARCHAR})
    WHERE date <= CAST($3 AS DATE)
      AND ((segment = 'history' AND date <= CAST($2 AS DATE))
           OR (segment = 'recent' AND date > CAST($2 AS DATE)))
      AND day < CAST($4 AS DATE)
      AND day NOT IN (CAST($4 AS DATE) - 1, CAST($4 AS DATE) - 7, CAST($4 AS DATE) - 30, CAST($4 AS DATE) - 90)
)
GROUP BY wallet, token, band
