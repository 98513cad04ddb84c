-- The predmkt_wallet_totals partition of one date (query/predmkt_wallet_totals.go):
-- the files of $1 (separated by chr(31)), which are an earlier date's totals (or none)
-- and the predmkt_wallet_days partitions of every date after it up to this one, summed
-- per wallet and market. Every figure is an integer sum, a count, a minimum or a
-- maximum, so the totals are what summing every date's day from the first would give,
-- and what board.sql sums over those days. A sum that overflowed BIGINT would fail the
-- cast (and the publication), never change a figure.
SELECT wallet, condition_id,
       CAST(sum(vol) AS BIGINT)  AS vol,
       CAST(sum(n) AS BIGINT)    AS n,
       CAST(sum(cash) AS BIGINT) AS cash,
       CAST(sum(net0) AS BIGINT) AS net0,
       CAST(sum(net1) AS BIGINT) AS net1,
       min(first_ts)             AS first_ts,
       max(last_ts)              AS last_ts
FROM read_parquet(string_split($1, chr(31)), hive_partitioning = false)
GROUP BY wallet, condition_id
